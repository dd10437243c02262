"""oipcodec's test suite, one package per layer (tests/README.md says which holds what).

The folders are packages so that pytest imports every test module under its dotted name
(``tests.kernels.test_framing``): two folders may then hold modules of the same name, and a
test imports the shared helpers as ``tests.support.<module>`` whatever folder it sits in.
"""
