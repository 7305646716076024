// The daemon's key=value log lines (SPEC 5.5): values are quoted when they
// need it, and nothing a client sent can break a line.
#include "server/log.h"

#include <gtest/gtest.h>

namespace ax::server {
namespace {

TEST(Log_5_5, PlainValuesStayBare) {
  EXPECT_EQ(Q("order-1001"), "order-1001");
  EXPECT_EQ(Q("http://127.0.0.1:9000/close"), "http://127.0.0.1:9000/close");
}

TEST(Log_5_5, ValuesThatNeedItAreQuoted) {
  EXPECT_EQ(Q(""), "\"\"");
  EXPECT_EQ(Q("exit status 1"), "\"exit status 1\"");
  EXPECT_EQ(Q("a=b"), "\"a=b\"");
  EXPECT_EQ(Q(R"(say "hi" \o/)"), R"("say \"hi\" \\o/")");
  EXPECT_EQ(Q("caf\xC3\xA9"), "\"caf\xC3\xA9\"");  // UTF-8 kept as it is
}

TEST(Log_5_5, ControlBytesCannotBreakALine) {
  EXPECT_EQ(Q("a\nb"), R"("a\nb")");
  EXPECT_EQ(Q("a\rlevel=error b"), R"("a\rlevel=error b")");
  EXPECT_EQ(Q("a\tb"), R"("a\tb")");
  EXPECT_EQ(Q(std::string_view("\x1b[2K\0\x7f", 6)), R"("\x1b[2K\x00\x7f")");
}

}  // namespace
}  // namespace ax::server
