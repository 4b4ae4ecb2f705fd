// Source locations and located compile errors.
//
// Every error the compiler reports is `file.ph:LINE:COL: error: message`, followed by the
// source line and a caret under the column (spec §5). Internally a CompileError carries the
// location and the bare message; SourceManager::format turns it into that text at the API
// boundary, so no C++ exception text ever reaches a user.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace phobos {

struct Loc {
  int file = -1;  // index into SourceManager; -1 when unknown
  int line = 0;   // 1-based
  int col = 0;    // 1-based, in bytes
};

class CompileError : public std::runtime_error {
 public:
  CompileError(Loc loc, const std::string& msg) : std::runtime_error(msg), loc(loc) {}
  Loc loc;
};

class SourceManager {
 public:
  int add(std::string name, std::string text);
  const std::string& name(int file) const { return files_.at(file).name; }
  const std::string& text(int file) const { return files_.at(file).text; }
  int count() const { return static_cast<int>(files_.size()); }
  std::string_view line_text(int file, int line) const;
  // "name:line:col: error: msg\n<source line>\n<caret>\n"
  std::string format(Loc loc, std::string_view msg) const;

 private:
  struct File {
    std::string name, text;
    std::vector<size_t> line_starts;
  };
  std::vector<File> files_;
};

}  // namespace phobos
