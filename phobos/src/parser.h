// Recursive-descent parser: tokens -> ast::File. Throws CompileError at the first error.
#pragma once

#include "ast.h"
#include "lexer.h"

namespace phobos {

ast::File parse(const std::string& text, int file);

}  // namespace phobos
