"""The single source of oipcodec's version (read by setuptools and by ``oipcodec --version``)."""

__version__ = "0.1.0"
