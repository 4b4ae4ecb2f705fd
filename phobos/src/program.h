// A parsed program: the user's file, the files it imports and std/linalg.ph, merged.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ast.h"
#include "ir.h"

namespace phobos {

struct Program {
  SourceManager sm;
  std::vector<std::shared_ptr<ast::Fn>> fns;  // user fns first, then std
  std::vector<std::shared_ptr<ast::Kernel>> kernels;
  std::string source_hash;  // of every file's text, for caches

  const ast::Fn* find_fn(const std::string& name) const;
  const ast::Kernel* find_kernel(const std::string& name) const;
};

struct CompileOptionsInternal {
  std::vector<std::string> include_dirs;
};

// Parses `text` as `filename`, then its imports and std.linalg; checks names. Throws
// CompileError (located in `prog.sm`).
void load_program(Program& prog, const std::string& text, const std::string& filename,
                  const CompileOptionsInternal& opt);

// The autotune space of a kernel, validated (names, positive integer candidates).
struct TuneSpace {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> values;
  size_t size() const;
  std::map<std::string, int64_t> at(size_t i) const;  // the i-th combination, row-major
};
TuneSpace tune_space(const ast::Kernel& k);

// Sema + inlining of one kernel instance. Throws CompileError.
ir::Kernel instantiate(const Program& prog, const ast::Kernel& k,
                       const std::map<std::string, int64_t>& params);

const std::string& std_linalg_source();

}  // namespace phobos
