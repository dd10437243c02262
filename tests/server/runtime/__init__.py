"""The composition root (src/oipcodec/server/runtime/): ``oipcodec serve`` as a user runs it,
``oipcodec.testing.background()`` in a script, the malloc settings of the serving process."""
