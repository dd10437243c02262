# What other native modules cimport from jsonencode (the fused REST path).

# The text of ``values`` as array_to_json writes it once its arguments are checked: ``values``
# C-contiguous in the datatype's native dtype (FP16 and BF16 as uint16 bits), ``shape`` the
# nesting to write (one dimension: flat); ``strict`` refuses non-finite values.
cdef object write_elements(values, tuple shape, str dt, bint strict)
