"""Hardening: properties every layer must keep under hostile or heavy use, rather than the
features of one layer. Input that claims too much is refused before memory is allocated
(limits); the native kernels leak no reference and no memory (refcounts) and give the same
answers from many threads (threads); the committed fuzz corpus replays on both implementations
(fuzz corpus); and the server survives a soak of malformed and abandoned requests with its
memory bounded (server soak)."""
