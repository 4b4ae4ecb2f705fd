# GGUF reader fuzzer (included by fuzz/CMakeLists.txt). The parser is compiled into the fuzzer
# because libtc hides its internals. Seeds: fuzz/seeds/gguf_reader (spec §2.6 example, a Q4_K file).
# Bounded run: scripts/fuzz (FUZZ_SECONDS), or fuzz_gguf_reader -max_total_time=60 DIR
tc_add_fuzzer(fuzz_gguf_reader ${CMAKE_CURRENT_LIST_DIR}/gguf_reader.cpp
              ${PROJECT_SOURCE_DIR}/src/gguf/reader.cpp ${PROJECT_SOURCE_DIR}/src/gguf/types.cpp
              ${PROJECT_SOURCE_DIR}/src/core/error.cpp)
target_link_libraries(fuzz_gguf_reader PRIVATE fmt::fmt)
target_include_directories(fuzz_gguf_reader PRIVATE ${PROJECT_SOURCE_DIR}/include)
