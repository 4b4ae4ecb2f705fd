#include "phobos/diag.h"

namespace phobos {

int SourceManager::add(std::string name, std::string text) {
  File f{std::move(name), std::move(text), {0}};
  for (size_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<int>(files_.size()) - 1;
}

std::string_view SourceManager::line_text(int file, int line) const {
  if (file < 0 || file >= count()) return {};
  const File& f = files_[file];
  if (line < 1 || static_cast<size_t>(line) > f.line_starts.size()) return {};
  size_t b = f.line_starts[line - 1];
  size_t e = f.text.find('\n', b);
  if (e == std::string::npos) e = f.text.size();
  std::string_view v(f.text.data() + b, e - b);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

std::string SourceManager::format(Loc loc, std::string_view msg) const {
  std::string out;
  if (loc.file < 0 || loc.file >= count()) {
    out = "<unknown>: error: ";
    out += msg;
    out += '\n';
    return out;
  }
  out = name(loc.file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
        ": error: " + std::string(msg) + "\n";
  std::string_view src = line_text(loc.file, loc.line);
  out += src;
  out += '\n';
  // Keep tabs so the caret lines up in a terminal with any tab width.
  for (int i = 0; i + 1 < loc.col && static_cast<size_t>(i) < src.size(); ++i)
    out += src[i] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

}  // namespace phobos
