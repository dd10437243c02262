"""The native kernels and their pure twins, each family on both implementations (``impl``)."""
