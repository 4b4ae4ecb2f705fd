#include "lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace phobos {

const char* tok_name(Tok t) {
  switch (t) {
    case Tok::Ident:
      return "identifier";
    case Tok::Int:
      return "integer literal";
    case Tok::Float:
      return "float literal";
    case Tok::String:
      return "string literal";
    case Tok::Newline:
      return "end of line";
    case Tok::Eof:
      return "end of file";
    case Tok::LParen:
      return "'('";
    case Tok::RParen:
      return "')'";
    case Tok::LBracket:
      return "'['";
    case Tok::RBracket:
      return "']'";
    case Tok::LBrace:
      return "'{'";
    case Tok::RBrace:
      return "'}'";
    case Tok::Comma:
      return "','";
    case Tok::Colon:
      return "':'";
    case Tok::Semi:
      return "';'";
    case Tok::Dot:
      return "'.'";
    case Tok::At:
      return "'@'";
    case Tok::ColonPlus:
      return "':+'";
    case Tok::Assign:
      return "'='";
    case Tok::PlusEq:
      return "'+='";
    case Tok::MinusEq:
      return "'-='";
    case Tok::StarEq:
      return "'*='";
    case Tok::SlashEq:
      return "'/='";
    case Tok::Plus:
      return "'+'";
    case Tok::Minus:
      return "'-'";
    case Tok::Star:
      return "'*'";
    case Tok::Slash:
      return "'/'";
    case Tok::Percent:
      return "'%'";
    case Tok::Lt:
      return "'<'";
    case Tok::Le:
      return "'<='";
    case Tok::Gt:
      return "'>'";
    case Tok::Ge:
      return "'>='";
    case Tok::EqEq:
      return "'=='";
    case Tok::Ne:
      return "'!='";
    case Tok::AndAnd:
      return "'&&'";
    case Tok::OrOr:
      return "'||'";
    case Tok::Bang:
      return "'!'";
  }
  return "token";
}

namespace {

struct Lexer {
  const std::string& s;
  int file;
  size_t i = 0;
  int line = 1, col = 1;
  int depth = 0;  // () and [] nesting: newlines inside are not statement ends
  std::vector<Token> out;

  Loc here() const { return {file, line, col}; }
  char peek(size_t k = 0) const { return i + k < s.size() ? s[i + k] : '\0'; }
  void adv() {
    if (s[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++i;
  }
  void push(Tok k, Loc l, std::string text = {}) { out.push_back(Token{k, std::move(text), l}); }

  void number(Loc l) {
    size_t b = i;
    bool is_float = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) adv();
    if (peek() == '.' && std::isdigit(static_cast<unsigned char>(peek(1)))) {
      is_float = true;
      adv();
      while (std::isdigit(static_cast<unsigned char>(peek()))) adv();
    } else if (peek() == '.' && !std::isalpha(static_cast<unsigned char>(peek(1)))) {
      is_float = true;  // "1." is a float; "1.x" is not a number followed by a member
      adv();
    }
    if (peek() == 'e' || peek() == 'E') {
      size_t k = 1;
      if (peek(1) == '+' || peek(1) == '-') k = 2;
      if (!std::isdigit(static_cast<unsigned char>(peek(k))))
        throw CompileError(here(), "malformed exponent in number literal");
      is_float = true;
      for (size_t j = 0; j < k; ++j) adv();
      while (std::isdigit(static_cast<unsigned char>(peek()))) adv();
    }
    if (std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_')
      throw CompileError(here(),
                         std::string("unexpected character '") + peek() + "' after number literal");
    Token t{is_float ? Tok::Float : Tok::Int, s.substr(b, i - b), l};
    errno = 0;
    if (is_float) {
      t.fval = std::strtod(t.text.c_str(), nullptr);
    } else {
      t.ival = std::strtoll(t.text.c_str(), nullptr, 10);
      if (errno == ERANGE || t.ival > 2147483647LL)
        throw CompileError(l, "integer literal " + t.text + " does not fit in i32");
    }
    out.push_back(std::move(t));
  }

  void run() {
    while (i < s.size()) {
      char c = peek();
      Loc l = here();
      if (c == '\n') {
        if (depth == 0) push(Tok::Newline, l);
        adv();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r') {
        adv();
        continue;
      }
      if (c == '/' && peek(1) == '/') {
        while (i < s.size() && peek() != '\n') adv();
        continue;
      }
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t b = i;
        while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') adv();
        push(Tok::Ident, l, s.substr(b, i - b));
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        number(l);
        continue;
      }
      if (c == '"') {
        adv();
        size_t b = i;
        while (i < s.size() && peek() != '"' && peek() != '\n') adv();
        if (peek() != '"') throw CompileError(l, "unterminated string literal");
        std::string text = s.substr(b, i - b);
        adv();
        push(Tok::String, l, text);
        continue;
      }
      auto two = [&](char a, char b) { return c == a && peek(1) == b; };
      Tok k;
      int n = 2;
      if (two(':', '+'))
        k = Tok::ColonPlus;
      else if (two('+', '='))
        k = Tok::PlusEq;
      else if (two('-', '='))
        k = Tok::MinusEq;
      else if (two('*', '='))
        k = Tok::StarEq;
      else if (two('/', '='))
        k = Tok::SlashEq;
      else if (two('<', '='))
        k = Tok::Le;
      else if (two('>', '='))
        k = Tok::Ge;
      else if (two('=', '='))
        k = Tok::EqEq;
      else if (two('!', '='))
        k = Tok::Ne;
      else if (two('&', '&'))
        k = Tok::AndAnd;
      else if (two('|', '|'))
        k = Tok::OrOr;
      else {
        n = 1;
        switch (c) {
          case '(':
            k = Tok::LParen;
            ++depth;
            break;
          case ')':
            k = Tok::RParen;
            --depth;
            break;
          case '[':
            k = Tok::LBracket;
            ++depth;
            break;
          case ']':
            k = Tok::RBracket;
            --depth;
            break;
          case '{':
            k = Tok::LBrace;
            break;
          case '}':
            k = Tok::RBrace;
            break;
          case ',':
            k = Tok::Comma;
            break;
          case ':':
            k = Tok::Colon;
            break;
          case ';':
            k = Tok::Semi;
            break;
          case '.':
            k = Tok::Dot;
            break;
          case '@':
            k = Tok::At;
            break;
          case '=':
            k = Tok::Assign;
            break;
          case '+':
            k = Tok::Plus;
            break;
          case '-':
            k = Tok::Minus;
            break;
          case '*':
            k = Tok::Star;
            break;
          case '/':
            k = Tok::Slash;
            break;
          case '%':
            k = Tok::Percent;
            break;
          case '<':
            k = Tok::Lt;
            break;
          case '>':
            k = Tok::Gt;
            break;
          case '!':
            k = Tok::Bang;
            break;
          default: {
            unsigned char u = static_cast<unsigned char>(c);
            char buf[48];
            if (u >= 32 && u < 127)
              snprintf(buf, sizeof buf, "unexpected character '%c'", c);
            else
              snprintf(buf, sizeof buf, "unexpected byte 0x%02x", u);
            throw CompileError(l, buf);
          }
        }
      }
      if (depth < 0) depth = 0;  // the parser reports the unbalanced bracket
      for (int j = 0; j < n; ++j) adv();
      push(k, l);
    }
    push(Tok::Newline, here());
    push(Tok::Eof, here());
  }
};

}  // namespace

std::vector<Token> lex(const std::string& text, int file) {
  Lexer lx{text, file, 0, 1, 1, 0, {}};
  lx.run();
  return std::move(lx.out);
}

}  // namespace phobos
