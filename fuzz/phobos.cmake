# Included by fuzz/CMakeLists.txt: the Phobos front-end fuzzer and its bounded CI run.
if(TARGET phobos)
  tc_add_fuzzer(fuzz_phobos_parser ${CMAKE_CURRENT_LIST_DIR}/phobos_parser.cpp)
  target_link_libraries(fuzz_phobos_parser PRIVATE phobos)
  # The first corpus folder is where libFuzzer writes; the seeds are read-only.
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/phobos_corpus)
  add_test(NAME fuzz_phobos_parser_bounded
           COMMAND fuzz_phobos_parser -max_total_time=30 -max_len=4096 -timeout=10
                   ${CMAKE_CURRENT_BINARY_DIR}/phobos_corpus
                   ${PROJECT_SOURCE_DIR}/phobos/examples ${PROJECT_SOURCE_DIR}/tests/phobos/errors)
  set_tests_properties(fuzz_phobos_parser_bounded PROPERTIES LABELS fuzz TIMEOUT 120)
endif()
