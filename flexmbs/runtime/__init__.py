"""The compiled kernels' runtime: numba's settings and the kernel cache keyed by the
kernels' sources (`config`, `kernel_cache`), native libraries kept for the kernels
(`cached_library`), the notice printed while kernels compile (`compile_notice`), and
tuples held by reference for kernels (`tuple_ref`). It imports nothing else of
flexmbs."""
