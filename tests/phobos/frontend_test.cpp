// Lexer, parser and sema unit tests.
#include <gtest/gtest.h>

#include "lexer.h"
#include "parser.h"
#include "phobos/phobos.h"
#include "program.h"
#include "util.h"

using namespace phobos;

TEST(PhobosLexer, TokensAndLiterals) {
  auto t = lex("let x = 1e-3 + 42 :+ 0.5 // comment\n", 0);
  std::vector<Tok> kinds;
  for (auto& k : t) kinds.push_back(k.kind);
  std::vector<Tok> want = {Tok::Ident,   Tok::Ident,   Tok::Assign,    Tok::Float,
                           Tok::Plus,    Tok::Int,     Tok::ColonPlus, Tok::Float,
                           Tok::Newline, Tok::Newline, Tok::Eof};
  EXPECT_EQ(kinds, want);
  EXPECT_DOUBLE_EQ(t[3].fval, 1e-3);
  EXPECT_EQ(t[5].ival, 42);
  EXPECT_EQ(t[5].loc.line, 1);
  EXPECT_EQ(t[5].loc.col, 16);
}

TEST(PhobosLexer, NewlinesInsideBracketsAreNotStatementEnds) {
  auto t = lex("f(a,\n  b)\n", 0);
  int newlines = 0;
  for (auto& k : t) newlines += k.kind == Tok::Newline;
  EXPECT_EQ(newlines, 2);  // after ')' and the final one
}

TEST(PhobosLexer, BadCharacterIsLocated) {
  try {
    lex("let x = 1\nlet y = $\n", 0);
    FAIL() << "expected an error";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.loc.line, 2);
    EXPECT_EQ(e.loc.col, 9);
    EXPECT_STREQ(e.what(), "unexpected character '$'");
  }
}

TEST(PhobosLexer, IntegerOverflowIsAnError) {
  EXPECT_THROW(lex("let x = 99999999999\n", 0), CompileError);
}

TEST(PhobosParser, SeedKernelsParse) {
  ast::File f = parse(phobos_test::example("sgemm.ph"), 0);
  ASSERT_EQ(f.kernels.size(), 2u);
  const ast::Kernel& s = *f.kernels[0];
  EXPECT_EQ(s.name, "sgemm");
  ASSERT_EQ(s.attrs.size(), 4u);
  EXPECT_EQ(s.attrs[0].name, "autotune");
  EXPECT_EQ(s.attrs[0].args.size(), 4u);
  EXPECT_EQ(s.attrs[0].args[3].key, "T");
  EXPECT_EQ(s.attrs[0].args[3].list.size(), 2u);
  EXPECT_EQ(s.attrs[3].name, "aligned");
  EXPECT_EQ(s.attrs[3].args[0].key, "M");
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[0].type->kind, ast::TypeExpr::Tensor);
  EXPECT_EQ(s.params[3].type->kind, ast::TypeExpr::Scalar);
  ASSERT_EQ(s.body.size(), 6u);
  EXPECT_EQ(s.body[3]->kind, ast::Stmt::ExprStmt);
  EXPECT_EQ(s.body[5]->kind, ast::Stmt::Assign);
  EXPECT_EQ(s.body[5]->target->items.size(), 2u);
  EXPECT_EQ(s.body[5]->target->items[0].kind, ast::SliceItem::Range);
}

TEST(PhobosParser, PrecedenceAndSpans) {
  ast::File f = parse("fn g(a, b, c) {\n  return a + b * c < 3 && !(a == b)\n}\n", 0);
  const ast::Expr& e = *f.fns[0]->body[0]->value;
  ASSERT_EQ(e.kind, ast::Expr::Binary);
  EXPECT_EQ(e.name, "&&");
  EXPECT_EQ(e.args[0]->name, "<");
  EXPECT_EQ(e.args[0]->args[0]->name, "+");
  EXPECT_EQ(e.args[0]->args[0]->args[1]->name, "*");
  EXPECT_EQ(e.args[1]->kind, ast::Expr::Unary);
  EXPECT_EQ(e.loc.line, 2);
  EXPECT_EQ(e.loc.col, 24);  // the '&&'
}

TEST(PhobosParser, ForUnrollIfElseAndSemicolons) {
  ast::File f = parse(
      "fn h(x) {\n  for<unroll 4> i in range(0, 8, 2) { x += 1; x -= 1 }\n"
      "  if x > 0 { x = 1 }\n  else { x = 2 }\n}\n",
      0);
  const auto& body = f.fns[0]->body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]->kind, ast::Stmt::For);
  EXPECT_EQ(body[0]->unroll->ival, 4);
  EXPECT_EQ(body[0]->body.size(), 2u);
  EXPECT_EQ(body[1]->kind, ast::Stmt::If);
  EXPECT_EQ(body[1]->else_body.size(), 1u);
}

TEST(PhobosParser, DeepNestingIsAnErrorNotACrash) {
  std::string src =
      "fn f(x) { return " + std::string(5000, '(') + "x" + std::string(5000, ')') + " }\n";
  EXPECT_THROW(parse(src, 0), CompileError);
}

static ir::Kernel inst(const std::string& src, const std::string& kernel,
                       const std::map<std::string, int64_t>& p = {}) {
  Program prog;
  load_program(prog, src, "t.ph", {});
  return instantiate(prog, *prog.find_kernel(kernel), p);
}

TEST(PhobosSema, TypesShapesAndBroadcasting) {
  ir::Kernel k = inst(
      "kernel k(X: tensor<f16>[M, 64], y: tensor<f32>[M, 64], s: f32) {\n"
      "  let t = X[ctx.block.x * 16 :+ 16, :]\n"
      "  let r = sum(f32(t), 1)\n"
      "  let v = X[0, 0 :+ 64]\n"
      "  y[ctx.block.x * 16 :+ 16, 0 :+ 64] = f32(t) * s + r + f32(v) * 2\n"
      "}\n",
      "k");
  // `t` and `v` read tensors, so they are registers; `r` is a pure function of the immutable
  // `t` and is substituted where it is used, keeping its type.
  ASSERT_EQ(k.regs.size(), 2u);
  EXPECT_EQ(ir::type_str(k.regs[0].type), "tile<f16>[16, 64]");
  EXPECT_EQ(ir::type_str(k.regs[1].type), "tile<f16>[64]");
  EXPECT_NE(ir::print(k).find("sum(f32(%t), axis 1)"), std::string::npos) << ir::print(k);
  ASSERT_EQ(k.body.back().kind, ir::Stmt::Store);
  EXPECT_EQ(ir::type_str(k.body.back().value->type), "tile<f32>[16, 64]");
  // Grid inferred from the store: (cdiv(M, 16), 1, 1).
  EXPECT_EQ(ir::print_expr(k, k.grid[0]), "cdiv(M, 16)");
  EXPECT_EQ(ir::print_expr(k, k.grid[1]), "1");
}

TEST(PhobosSema, DotTakesTheAccumulatorType) {
  ir::Kernel k = inst(phobos_test::example("linear_gelu.ph"), "linear_gelu",
                      {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"T", 128}});
  std::string ir = ir::print(k);
  EXPECT_NE(ir.find("dot_t<f32>(%a, %b)"), std::string::npos) << ir;
  EXPECT_NE(ir.find("gelu((%acc + %b.1))"), std::string::npos) << ir;
}

TEST(PhobosSema, IntegerDivisionTruncatesAndFolds) {
  ir::Kernel k = inst(
      "@grid(1)\nkernel k(y: tensor<i32>[4]) {\n  y[0] = -7 / 2\n  y[1] = -7 % 2\n  "
      "y[2] = cdiv(7, 2)\n}\n",
      "k");
  ASSERT_EQ(k.body.size(), 3u);
  EXPECT_EQ(k.body[0].value->cval, -3);
  EXPECT_EQ(k.body[1].value->cval, -1);
  EXPECT_EQ(k.body[2].value->cval, 4);
}

TEST(PhobosSema, FnArgumentsByReferenceAndReturn) {
  ir::Kernel k = inst(
      "fn bump(v, n) {\n  v += n\n}\nfn twice(x) {\n  return x * 2\n}\n"
      "@grid(1)\nkernel k(y: tensor<f32>[1]) {\n  var s: f32 = 1.0\n  bump(s, twice(3.0))\n  y[0] "
      "= s\n}\n",
      "k");
  std::string ir = ir::print(k);
  EXPECT_NE(ir.find("%s = (%s + 6.0)"), std::string::npos) << ir;
}

TEST(PhobosApi, CompileErrorIsLocatedWithCaret) {
  try {
    compile("kernel k(A: tensor<f32>[M]) {\n  let x = nope\n}\n", "bad.ph");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "bad.ph:2:11: error: unknown name 'nope'\n  let x = nope\n          ^");
  }
}
