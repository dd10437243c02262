"""Deprecated: this client module is :mod:`oipcodec.client.trtis_client`."""

import warnings

from oipcodec.client.trtis_client import *  # noqa: F403
from oipcodec.client.trtis_client import (  # noqa: F401
    Outputs,
    __all__,
    build_header,
    read_outputs,
)

warnings.warn(
    "oipcodec.client.v1 is deprecated and will be removed in the next release: "
    "use oipcodec.client.trtis_client",
    DeprecationWarning,
    stacklevel=2,
)
