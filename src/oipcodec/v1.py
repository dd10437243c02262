"""Deprecated: the TensorRT Inference Server v1 codec is :mod:`oipcodec.trtis_v1`."""

import warnings

from oipcodec.trtis_v1 import *  # noqa: F403
from oipcodec.trtis_v1 import __all__, messages  # noqa: F401

warnings.warn(
    "oipcodec.v1 is deprecated and will be removed in the next release: use oipcodec.trtis_v1",
    DeprecationWarning,
    stacklevel=2,
)

#: The former name of ``messages``, kept as it was here.
pb = messages
