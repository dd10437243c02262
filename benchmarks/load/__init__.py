"""Scripts that measure end to end against real servers, each run as ``python
benchmarks/load/<script>.py`` (its docstring gives the options): which one answers which
question is the table in docs/development.md, "Which script answers which question"."""
