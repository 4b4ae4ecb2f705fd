// Must-fail programs (tests/phobos/errors/*.ph). The first line of each is
//   // expect: NAME.ph:LINE:COL: error: MESSAGE
// and compiling it must fail with exactly that first line, followed by the source line and a
// caret under the column (spec §5). A program that compiles is a failure.
#include <gtest/gtest.h>

#include <filesystem>

#include "phobos/phobos.h"
#include "util.h"

namespace fs = std::filesystem;

TEST(PhobosErrors, EveryMustFailProgramFailsWithItsLocatedMessage) {
  std::vector<fs::path> files;
  for (auto& e : fs::directory_iterator(std::string(PHOBOS_TEST_DIR) + "/errors"))
    if (e.path().extension() == ".ph") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 25u);
  for (auto& f : files) {
    SCOPED_TRACE(f.filename().string());
    std::string src = phobos_test::read_file(f.string());
    const std::string tag = "// expect: ";
    ASSERT_EQ(src.rfind(tag, 0), 0u) << "first line must be '// expect: ...'";
    std::string expected = src.substr(tag.size(), src.find('\n') - tag.size());
    try {
      phobos::compile(src, f.filename().string());
      ADD_FAILURE() << "compiled, but must fail with: " << expected;
    } catch (const phobos::Error& e) {
      std::string msg = e.what();
      std::string first = msg.substr(0, msg.find('\n'));
      EXPECT_EQ(first, expected);
      // Three lines: the message, the source line, the caret.
      size_t nl1 = msg.find('\n'), nl2 = msg.find('\n', nl1 + 1);
      ASSERT_NE(nl2, std::string::npos) << msg;
      std::string caret = msg.substr(nl2 + 1);
      ASSERT_FALSE(caret.empty());
      EXPECT_EQ(caret.back(), '^');
      size_t col = std::stoul(first.substr(first.find(':', first.find(':') + 1) + 1));
      EXPECT_EQ(caret.size(), col) << msg;
    }
  }
}
