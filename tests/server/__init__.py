"""The embedded server, one sub-package per room of src/oipcodec/server/ (frontends, http11,
runtime, inference); the core's tests (model API, registry, repository, shared memory,
statistics) stay here."""
