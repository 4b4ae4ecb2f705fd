#include "parser.h"

namespace phobos {

using namespace ast;

namespace {

class Parser {
 public:
  Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  File file() {
    File f;
    skip_newlines();
    while (!at(Tok::Eof)) {
      std::vector<Attr> attrs;
      while (at(Tok::At)) {
        attrs.push_back(attr());
        skip_newlines();
      }
      const Token& k = cur();
      if (is_kw("kernel")) {
        f.kernels.push_back(kernel(std::move(attrs)));
      } else if (!attrs.empty()) {
        throw CompileError(k.loc, "attributes must be followed by a kernel declaration");
      } else if (is_kw("fn")) {
        f.fns.push_back(fn());
      } else if (is_kw("import")) {
        f.imports.push_back(import());
      } else {
        throw CompileError(
            k.loc, "expected 'fn', 'kernel' or 'import' at top level, found " + describe(k));
      }
      end_stmt();
      skip_newlines();
    }
    return f;
  }

 private:
  std::vector<Token> t_;
  size_t p_ = 0;
  int depth_ = 0;  // nesting guard: a fuzzer must not overflow the stack

  const Token& cur() const { return t_[p_]; }
  bool at(Tok k) const { return cur().kind == k; }
  bool is_kw(const char* w) const { return at(Tok::Ident) && cur().text == w; }
  Token next() { return t_[p_ < t_.size() - 1 ? p_++ : p_]; }
  static std::string describe(const Token& t) {
    if (t.kind == Tok::Ident) return "'" + t.text + "'";
    if (t.kind == Tok::Int || t.kind == Tok::Float) return "'" + t.text + "'";
    return tok_name(t.kind);
  }
  Token expect(Tok k, const char* what) {
    if (!at(k))
      throw CompileError(cur().loc, std::string("expected ") + tok_name(k) + " " + what +
                                        ", found " + describe(cur()));
    return next();
  }
  Token ident(const char* what) {
    if (!at(Tok::Ident))
      throw CompileError(cur().loc, std::string("expected ") + what + ", found " + describe(cur()));
    return next();
  }
  void skip_newlines() {
    while (at(Tok::Newline) || at(Tok::Semi)) next();
  }
  void end_stmt() {
    if (at(Tok::Newline) || at(Tok::Semi)) {
      next();
      return;
    }
    if (at(Tok::RBrace) || at(Tok::Eof)) return;
    throw CompileError(cur().loc, "expected end of statement, found " + describe(cur()));
  }
  struct Guard {
    int& d;
    Guard(int& d, Loc l) : d(d) {
      if (++d > 200) throw CompileError(l, "nesting too deep (more than 200 levels)");
    }
    ~Guard() { --d; }
  };

  Attr attr() {
    Attr a;
    a.loc = next().loc;  // '@'
    a.name = ident("attribute name").text;
    if (!at(Tok::LParen)) return a;
    a.has_parens = true;
    next();
    while (!at(Tok::RParen)) {
      Attr::Arg arg;
      arg.loc = cur().loc;
      if (at(Tok::Ident) && t_[p_ + 1].kind == Tok::Ident && t_[p_ + 1].text == "in") {
        arg.key = next().text;
        next();
        arg.is_list = true;
        expect(Tok::LBracket, "to open the candidate list");
        while (!at(Tok::RBracket)) {
          arg.list.push_back(expr());
          if (!at(Tok::RBracket)) expect(Tok::Comma, "between candidates");
        }
        next();
      } else if (at(Tok::Ident) && t_[p_ + 1].kind == Tok::Assign) {
        arg.key = next().text;
        next();
        arg.value = expr();
      } else {
        arg.value = expr();
      }
      a.args.push_back(std::move(arg));
      if (!at(Tok::RParen)) expect(Tok::Comma, "between attribute arguments");
    }
    next();
    return a;
  }

  Import import() {
    Import im;
    im.loc = next().loc;
    if (at(Tok::String)) {
      im.is_file = true;
      im.path = next().text;
      return im;
    }
    im.path = ident("module name after 'import'").text;
    while (at(Tok::Dot)) {
      next();
      im.path += "." + ident("module name").text;
    }
    return im;
  }

  std::shared_ptr<Fn> fn() {
    auto f = std::make_shared<Fn>();
    next();
    Token n = ident("function name");
    f->name = n.text;
    f->loc = n.loc;
    expect(Tok::LParen, "after the function name");
    while (!at(Tok::RParen)) {
      Token pn = ident("parameter name");
      if (at(Tok::Colon))
        throw CompileError(cur().loc,
                           "fn parameters are untyped (a fn is inlined with the "
                           "argument's type); remove the type of '" +
                               pn.text + "'");
      f->params.push_back({pn.text, pn.loc, nullptr});
      if (!at(Tok::RParen)) expect(Tok::Comma, "between parameters");
    }
    next();
    f->body = block();
    return f;
  }

  std::shared_ptr<Kernel> kernel(std::vector<Attr> attrs) {
    auto k = std::make_shared<Kernel>();
    next();
    Token n = ident("kernel name");
    k->name = n.text;
    k->loc = n.loc;
    k->attrs = std::move(attrs);
    expect(Tok::LParen, "after the kernel name");
    while (!at(Tok::RParen)) {
      Token pn = ident("parameter name");
      expect(Tok::Colon, "and a type after a kernel parameter name");
      k->params.push_back({pn.text, pn.loc, type()});
      if (!at(Tok::RParen)) expect(Tok::Comma, "between parameters");
    }
    next();
    k->body = block();
    return k;
  }

  std::shared_ptr<TypeExpr> type() {
    auto ty = std::make_shared<TypeExpr>();
    ty->loc = cur().loc;
    Token n = ident("a type");
    if (n.text == "tensor" || n.text == "tile") {
      ty->kind = n.text == "tensor" ? TypeExpr::Tensor : TypeExpr::Tile;
      expect(Tok::Lt, ("after '" + n.text + "'").c_str());
      Token d = ident("an element type");
      ty->dtype = d.text;
      ty->dtype_loc = d.loc;
      expect(Tok::Gt, "after the element type");
      expect(Tok::LBracket, "to open the shape");
      while (!at(Tok::RBracket)) {
        ty->dims.push_back(expr());
        if (!at(Tok::RBracket)) expect(Tok::Comma, "between dimensions");
      }
      next();
    } else {
      ty->kind = TypeExpr::Scalar;
      ty->dtype = n.text;
      ty->dtype_loc = n.loc;
    }
    return ty;
  }

  std::vector<StmtP> block() {
    skip_newlines_only();
    expect(Tok::LBrace, "to open a block");
    Guard g(depth_, cur().loc);
    std::vector<StmtP> out;
    skip_newlines();
    while (!at(Tok::RBrace)) {
      if (at(Tok::Eof)) throw CompileError(cur().loc, "expected '}' before end of file");
      out.push_back(stmt());
      end_stmt();
      skip_newlines();
    }
    next();
    return out;
  }
  void skip_newlines_only() {
    while (at(Tok::Newline)) next();
  }

  StmtP stmt() {
    auto s = std::make_shared<Stmt>();
    s->loc = cur().loc;
    if (is_kw("let") || is_kw("var")) {
      s->kind = cur().text == "let" ? Stmt::Let : Stmt::Var;
      next();
      Token n = ident("a variable name");
      s->name = n.text;
      s->name_loc = n.loc;
      if (at(Tok::Colon)) {
        next();
        s->type = type();
      }
      expect(Tok::Assign, ("to initialize '" + n.text + "'").c_str());
      s->value = expr();
      return s;
    }
    if (is_kw("for")) {
      s->kind = Stmt::For;
      next();
      if (at(Tok::Lt)) {
        next();
        Token u = ident("'unroll'");
        if (u.text != "unroll") throw CompileError(u.loc, "expected 'unroll' after 'for<'");
        s->unroll = unary();  // unary: a '>' here closes the annotation
        expect(Tok::Gt, "to close 'for<unroll U>'");
      }
      Token v = ident("a loop variable");
      s->name = v.text;
      s->name_loc = v.loc;
      if (!is_kw("in")) throw CompileError(cur().loc, "expected 'in' after the loop variable");
      next();
      Token r = ident("'range'");
      if (r.text != "range") throw CompileError(r.loc, "expected 'range(lo, hi[, step])'");
      expect(Tok::LParen, "after 'range'");
      s->lo = expr();
      expect(Tok::Comma, "between range bounds");
      s->hi = expr();
      if (at(Tok::Comma)) {
        next();
        s->step = expr();
      }
      expect(Tok::RParen, "to close 'range('");
      s->body = block();
      return s;
    }
    if (is_kw("if")) return if_stmt();
    if (is_kw("return")) {
      s->kind = Stmt::Return;
      next();
      if (!at(Tok::Newline) && !at(Tok::Semi) && !at(Tok::RBrace)) s->value = expr();
      return s;
    }
    ExprP e = expr();
    Tok k = cur().kind;
    if (k == Tok::Assign || k == Tok::PlusEq || k == Tok::MinusEq || k == Tok::StarEq ||
        k == Tok::SlashEq) {
      s->kind = Stmt::Assign;
      s->op = k == Tok::Assign    ? "="
              : k == Tok::PlusEq  ? "+="
              : k == Tok::MinusEq ? "-="
              : k == Tok::StarEq  ? "*="
                                  : "/=";
      s->loc = cur().loc;
      next();
      if (e->kind != Expr::Name && e->kind != Expr::Index)
        throw CompileError(e->loc,
                           "the left side of '" + s->op + "' must be a variable or a slice");
      s->target = e;
      s->value = expr();
      return s;
    }
    s->kind = Stmt::ExprStmt;
    s->value = e;
    return s;
  }

  StmtP if_stmt() {
    auto s = std::make_shared<Stmt>();
    s->kind = Stmt::If;
    s->loc = next().loc;
    s->cond = expr();
    s->body = block();
    size_t save = p_;
    skip_newlines_only();
    if (is_kw("else")) {
      next();
      if (is_kw("if"))
        s->else_body.push_back(if_stmt());
      else
        s->else_body = block();
    } else {
      p_ = save;
    }
    return s;
  }

  ExprP mk(Expr::Kind k, Loc l) {
    auto e = std::make_shared<Expr>();
    e->kind = k;
    e->loc = l;
    return e;
  }

  ExprP expr() {
    Guard g(depth_, cur().loc);
    return binary(0);
  }
  static int prec(Tok k) {
    switch (k) {
      case Tok::OrOr:
        return 1;
      case Tok::AndAnd:
        return 2;
      case Tok::EqEq:
      case Tok::Ne:
      case Tok::Lt:
      case Tok::Le:
      case Tok::Gt:
      case Tok::Ge:
        return 3;
      case Tok::Plus:
      case Tok::Minus:
        return 4;
      case Tok::Star:
      case Tok::Slash:
      case Tok::Percent:
        return 5;
      default:
        return 0;
    }
  }
  static const char* op_text(Tok k) {
    switch (k) {
      case Tok::OrOr:
        return "||";
      case Tok::AndAnd:
        return "&&";
      case Tok::EqEq:
        return "==";
      case Tok::Ne:
        return "!=";
      case Tok::Lt:
        return "<";
      case Tok::Le:
        return "<=";
      case Tok::Gt:
        return ">";
      case Tok::Ge:
        return ">=";
      case Tok::Plus:
        return "+";
      case Tok::Minus:
        return "-";
      case Tok::Star:
        return "*";
      case Tok::Slash:
        return "/";
      default:
        return "%";
    }
  }
  ExprP binary(int min_prec) {
    ExprP lhs = unary();
    for (;;) {
      int pr = prec(cur().kind);
      if (pr == 0 || pr <= min_prec) return lhs;
      Token op = next();
      ExprP rhs = binary(pr);
      ExprP b = mk(Expr::Binary, op.loc);
      b->name = op_text(op.kind);
      b->args = {lhs, rhs};
      lhs = b;
    }
  }
  ExprP unary() {
    Guard g(depth_, cur().loc);
    if (at(Tok::Minus) || at(Tok::Bang)) {
      Token op = next();
      ExprP u = mk(Expr::Unary, op.loc);
      u->name = op.kind == Tok::Minus ? "-" : "!";
      u->args = {unary()};
      return u;
    }
    return postfix(primary());
  }
  ExprP postfix(ExprP e) {
    for (;;) {
      if (at(Tok::LBracket)) {
        ExprP ix = mk(Expr::Index, cur().loc);
        next();
        ix->args = {e};
        while (!at(Tok::RBracket)) {
          ix->items.push_back(slice_item());
          if (!at(Tok::RBracket)) expect(Tok::Comma, "between indices");
        }
        next();
        if (ix->items.empty()) throw CompileError(ix->loc, "empty index list");
        e = ix;
      } else if (at(Tok::Dot)) {
        throw CompileError(cur().loc,
                           "'.' is only allowed in ctx.block.x, ctx.thread.x and "
                           "ctx.grid.x (and .y, .z)");
      } else {
        return e;
      }
    }
  }
  SliceItem slice_item() {
    SliceItem it;
    it.loc = cur().loc;
    if (at(Tok::Colon)) {
      next();
      it.kind = SliceItem::Full;
      return it;
    }
    it.start = expr();
    if (at(Tok::ColonPlus)) {
      next();
      it.kind = SliceItem::Range;
      it.len = expr();
    } else if (at(Tok::Colon)) {
      throw CompileError(cur().loc, "slices are written 'start :+ length' (or ':' alone)");
    }
    return it;
  }
  ExprP primary() {
    const Token& t = cur();
    if (at(Tok::Int)) {
      ExprP e = mk(Expr::Int, t.loc);
      e->ival = t.ival;
      next();
      return e;
    }
    if (at(Tok::Float)) {
      ExprP e = mk(Expr::Float, t.loc);
      e->fval = t.fval;
      next();
      return e;
    }
    if (at(Tok::LParen)) {
      next();
      ExprP e = expr();
      expect(Tok::RParen, "to close '('");
      return e;
    }
    if (at(Tok::Ident)) {
      Token n = next();
      if (n.text == "ctx") return ctx(n);
      if (at(Tok::LParen)) {
        ExprP c = mk(Expr::Call, n.loc);
        c->name = n.text;
        next();
        while (!at(Tok::RParen)) {
          c->args.push_back(expr());
          if (!at(Tok::RParen)) expect(Tok::Comma, "between arguments");
        }
        next();
        return c;
      }
      ExprP e = mk(Expr::Name, n.loc);
      e->name = n.text;
      return e;
    }
    throw CompileError(t.loc, "expected an expression, found " + describe(t));
  }
  ExprP ctx(const Token& n) {
    ExprP e = mk(Expr::Ctx, n.loc);
    expect(Tok::Dot, "after 'ctx' (ctx.block.x, ctx.thread.x, ctx.grid.x)");
    Token what = ident("'block', 'thread' or 'grid' after 'ctx.'");
    if (what.text != "block" && what.text != "thread" && what.text != "grid")
      throw CompileError(what.loc, "unknown context 'ctx." + what.text +
                                       "': expected ctx.block, ctx.thread or ctx.grid");
    expect(Tok::Dot, ("after 'ctx." + what.text + "'").c_str());
    Token ax = ident("an axis x, y or z");
    if (ax.text != "x" && ax.text != "y" && ax.text != "z")
      throw CompileError(ax.loc, "unknown axis '" + ax.text + "': expected x, y or z");
    if (what.text == "thread" && ax.text != "x")
      throw CompileError(ax.loc, "ctx.thread has only the axis x (blocks are one-dimensional)");
    e->name = what.text;
    e->axis = ax.text[0] - 'x';
    return e;
  }
};

}  // namespace

File parse(const std::string& text, int file) {
  Parser p(lex(text, file));
  return p.file();
}

}  // namespace phobos
