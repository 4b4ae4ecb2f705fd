// libFuzzer target: the Phobos front end (lexer, parser, sema, inlining, every kernel's first
// instance) on arbitrary bytes. Any input must give a module or a located phobos::Error, never
// a crash, a hang or a sanitizer report. Seed corpus: phobos/examples and tests/phobos/errors.
#include <cstddef>
#include <cstdint>
#include <string>

#include "phobos/phobos.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;  // bigger inputs only slow the search down
  std::string src(reinterpret_cast<const char*>(data), size);
  try {
    phobos::Module m = phobos::compile(src, "fuzz.ph");
    for (auto& name : m.kernel_names()) {
      phobos::Kernel k = m.kernel(name);
      (void)k.ir();
      (void)k.plan();
    }
  } catch (const phobos::Error& e) {
    std::string msg = e.what();
    if (msg.empty()) __builtin_trap();  // an error must say something
  }
  return 0;
}
