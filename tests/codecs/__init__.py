"""The codecs built on the kernels (REST bodies, protobuf messages, the generated protobuf
modules) and the data model they encode: datatypes, tensors, requests and responses."""
