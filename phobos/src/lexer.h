// Tokens of a .ph file (spec §2). Newlines are tokens because they end statements, except
// inside () and [] where expressions may wrap across lines.
#pragma once

#include <string>
#include <vector>

#include "phobos/diag.h"

namespace phobos {

enum class Tok {
  Ident,
  Int,
  Float,
  String,
  Newline,
  Eof,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semi,
  Dot,
  At,
  ColonPlus,
  Assign,
  PlusEq,
  MinusEq,
  StarEq,
  SlashEq,
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Lt,
  Le,
  Gt,
  Ge,
  EqEq,
  Ne,
  AndAnd,
  OrOr,
  Bang,
};

const char* tok_name(Tok t);

struct Token {
  Tok kind;
  std::string text;  // identifier / literal spelling
  Loc loc;
  long long ival = 0;
  double fval = 0;
};

// Throws CompileError on a malformed token.
std::vector<Token> lex(const std::string& text, int file);

}  // namespace phobos
