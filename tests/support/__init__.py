"""Helpers shared by the test modules (not test modules themselves): importing peers, free
ports, array equality, an HTTP/1.1 answer reader, and the model modules the tests serve.

Some of the model modules are loaded by another process: ``oipcodec serve --model-module
tests.support.server_models``, ``python tests/support/kserve_models_stock.py`` and
``mlserver start`` with this folder on PYTHONPATH (``mlserver_models``,
``mlserver_models_stock``); ``mlserver_grpc_client.py`` runs as a script. Those never import
from ``tests``.
"""
