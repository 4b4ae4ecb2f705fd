# tc's own CUDA GEMM kernels (owned by the kernel engineer). Included by src/cuda/CMakeLists.txt
# and by tests/cuda_lab; paths are absolute so either can include it. The wgmma instances are
# split one file per (type, transposes) so that a parallel build compiles them side by side.
set(TC_CUDA_KERNEL_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_bf16_nn.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_bf16_nt.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_bf16_tn.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_bf16_tt.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_f16_nn.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_f16_nt.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_f16_tn.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_f16_tt.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_wgmma_s8.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_pack.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_pack_vec.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_mma.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_skinny.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_skinny_bulk.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_f32.cu
    ${CMAKE_CURRENT_LIST_DIR}/gemm_tf32x3.cu)
