# The quantized matmul's CUDA kernels and dispatch rows (issue 4). Included by
# src/cuda/CMakeLists.txt, which adds them to libtc and defines TC_CUDA_HAVE_QUANT so that
# src/quant/quant_table.cpp lists the CUDA rows. Paths are absolute so others can include it.
set(TC_CUDA_QUANT_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/quant_rows.cpp
    ${CMAKE_CURRENT_LIST_DIR}/quant_v1.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemv_quant.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemv_quant_staged.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemv_quant_bulk.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemv_quant_q8.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemv_quant_i8.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma_bulk.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma_f16.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma_xreg.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma_b32.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_mma_b32_geometry.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_prefill_dequant.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_prefill_fused.cu
    ${CMAKE_CURRENT_LIST_DIR}/quant_fill.cu)
