# The int8 ping-pong GEMM kernel's test (test_gemm_s8_pingpong.cu), CUDA builds only. The s8
# kernels' translation unit and the split-K reduce are compiled into the test, so it launches
# them directly (libtc exports no kernel symbols) and reads the ping-pong launch counter.
# Included from tests/cuda/CMakeLists.txt: include(${CMAKE_CURRENT_SOURCE_DIR}/s8_pingpong.cmake)
if(NOT TC_HAVE_CUDA OR NOT TARGET tc_bench_extras)
  return()
endif()
add_executable(tc_s8_pingpong_tests
  ${CMAKE_CURRENT_LIST_DIR}/test_gemm_s8_pingpong.cu
  ${CMAKE_CURRENT_LIST_DIR}/test_gemm_s8_pingpong_api.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_test_util.cpp
  ${PROJECT_SOURCE_DIR}/src/cuda/gemm_wgmma_s8.cu
  ${PROJECT_SOURCE_DIR}/src/cuda/gemm_pack.cu)
target_include_directories(tc_s8_pingpong_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                           ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/bench)
target_compile_definitions(tc_s8_pingpong_tests PRIVATE TC_TEST_HAVE_PEER=1)
target_link_libraries(tc_s8_pingpong_tests PRIVATE tc_testlib GTest::gtest_main tc_warnings
                      tc_bench_extras CUDA::cudart_static CUDA::cublasLt)
set(_s8pp_gencode)
foreach(arch ${TC_CUDA_ARCHS})
  list(APPEND _s8pp_gencode "-gencode=arch=compute_${arch},code=sm_${arch}")
endforeach()
# Same CUDA settings as libtc (src/cuda/CMakeLists.txt says why).
set_target_properties(tc_s8_pingpong_tests PROPERTIES CUDA_ARCHITECTURES OFF
                      CUDA_RUNTIME_LIBRARY Static CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED OFF
                      CUDA_EXTENSIONS ON)
target_compile_options(tc_s8_pingpong_tests PRIVATE
                       $<$<COMPILE_LANGUAGE:CUDA>:${_s8pp_gencode}>)
gtest_discover_tests(tc_s8_pingpong_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS cuda)
