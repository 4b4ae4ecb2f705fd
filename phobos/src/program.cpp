#include "program.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "parser.h"
#include "std_linalg.inc"  // generated: kStdLinalg, the text of std/linalg.ph

namespace phobos {

const std::string& std_linalg_source() {
  static const std::string s = kStdLinalg;
  return s;
}

const ast::Fn* Program::find_fn(const std::string& name) const {
  for (auto& f : fns)
    if (f->name == name) return f.get();
  return nullptr;
}

const ast::Kernel* Program::find_kernel(const std::string& name) const {
  for (auto& k : kernels)
    if (k->name == name) return k.get();
  return nullptr;
}

static bool is_builtin(const std::string& n) {
  static const std::set<std::string> b = {
      "extent", "dot",  "dot_t",   "sum",  "max",  "min",   "exp", "log",  "sqrt",
      "rsqrt",  "tanh", "sigmoid", "gelu", "silu", "relu",  "abs", "cdiv", "f32",
      "f16",    "bf16", "i32",     "i8",   "bool", "range", "ctx", "inf",  "nan"};
  return b.count(n) > 0;
}

static uint64_t fnv1a(uint64_t h, const std::string& s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {
struct Loader {
  Program& prog;
  const CompileOptionsInternal& opt;
  std::set<std::string> loaded;

  void add_file(const std::string& text, const std::string& name, bool is_std) {
    int id = prog.sm.add(name, text);
    ast::File f = parse(prog.sm.text(id), id);
    for (auto& im : f.imports) {
      if (!im.is_file) {
        if (im.path != "std.linalg")
          throw CompileError(im.loc, "unknown module '" + im.path +
                                         "' (the standard library "
                                         "is std.linalg; import files with import \"path.ph\")");
        continue;
      }
      namespace fs = std::filesystem;
      std::vector<fs::path> tries = {fs::path(name).parent_path() / im.path};
      for (auto& d : opt.include_dirs) tries.push_back(fs::path(d) / im.path);
      bool found = false;
      for (auto& p : tries) {
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        std::string canon = fs::weakly_canonical(p, ec).string();
        found = true;
        if (!loaded.insert(canon).second) break;  // imported already (or a cycle): once is enough
        std::ifstream in(p, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        add_file(ss.str(), p.string(), false);
        break;
      }
      if (!found) throw CompileError(im.loc, "cannot open imported file \"" + im.path + "\"");
    }
    for (auto& fn : f.fns) {
      if (is_builtin(fn->name))
        throw CompileError(fn->loc, "'" + fn->name + "' is a built-in name and cannot be a fn");
      std::set<std::string> seen;
      for (auto& p : fn->params)
        if (!seen.insert(p.name).second)
          throw CompileError(p.loc, "parameter '" + p.name + "' is given twice");
      if (const ast::Fn* old = prog.find_fn(fn->name)) {
        if (is_std) continue;  // a user fn of the same name shadows the standard library's
        throw CompileError(fn->loc, "fn '" + fn->name + "' is defined twice (first at line " +
                                        std::to_string(old->loc.line) + ")");
      }
      prog.fns.push_back(fn);
    }
    for (auto& k : f.kernels) {
      if (const ast::Kernel* old = prog.find_kernel(k->name))
        throw CompileError(k->loc, "kernel '" + k->name + "' is defined twice (first at line " +
                                       std::to_string(old->loc.line) + ")");
      if (prog.find_fn(k->name)) throw CompileError(k->loc, "'" + k->name + "' is already a fn");
      std::set<std::string> seen;
      for (auto& p : k->params)
        if (!seen.insert(p.name).second)
          throw CompileError(p.loc, "parameter '" + p.name + "' is given twice");
      prog.kernels.push_back(k);
    }
  }
};
}  // namespace

void load_program(Program& prog, const std::string& text, const std::string& filename,
                  const CompileOptionsInternal& opt) {
  Loader ld{prog, opt, {}};
  ld.loaded.insert(std::filesystem::weakly_canonical(filename).string());
  ld.add_file(text, filename, false);
  ld.add_file(std_linalg_source(), "std/linalg.ph", true);
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < prog.sm.count(); ++i) h = fnv1a(fnv1a(h, prog.sm.name(i)), prog.sm.text(i));
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  prog.source_hash = buf;
}

}  // namespace phobos
