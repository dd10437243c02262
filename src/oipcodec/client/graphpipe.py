"""Deprecated: this client module is :mod:`oipcodec.client.graphpipe_client`."""

import warnings

from oipcodec.client.graphpipe_client import *  # noqa: F403
from oipcodec.client.graphpipe_client import __all__  # noqa: F401

warnings.warn(
    "oipcodec.client.graphpipe is deprecated and will be removed in the next release: "
    "use oipcodec.client.graphpipe_client",
    DeprecationWarning,
    stacklevel=2,
)
