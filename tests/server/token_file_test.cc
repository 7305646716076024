// The bearer token's file (SPEC 5.5's token, read by the daemon and the client).
#include "server/token_file.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace ax::server {
namespace {

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ax-token-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& text) {
    std::string p = (dir_ / "token").string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string Error(const std::string& path) {
    auto r = ReadTokenFile(path);
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : r.status().message();
  }
  std::filesystem::path dir_;
};

TEST_F(TokenFileTest, Serve_5_5_TheTokenIsTheTextWithoutTheSpaceAroundIt) {
  EXPECT_EQ(ReadTokenFile(Write("s3cret\n")).value(), "s3cret");
  // The client read only the first line: this file was "empty" to it, and
  // "s3cret" to the daemon.
  EXPECT_EQ(ReadTokenFile(Write("\n  s3cret-._~+/=\r\n\n")).value(), "s3cret-._~+/=");
}

TEST_F(TokenFileTest, Serve_5_5_AFileNoHeaderCouldCarryIsRefused) {
  EXPECT_NE(Error(Write("")).find("is empty"), std::string::npos);
  EXPECT_NE(Error(Write(" \n\t\n")).find("is empty"), std::string::npos);
  EXPECT_NE(Error(Write("one\ntwo\n")).find("more than one token"), std::string::npos);
  EXPECT_NE(Error(Write("one two")).find("more than one token"), std::string::npos);
  EXPECT_NE(Error(Write(std::string("a\0b", 3))).find("more than one token"), std::string::npos);
  EXPECT_NE(Error(Write("caf\xc3\xa9")).find("more than one token"), std::string::npos);
  EXPECT_NE(Error(dir_.string()).find("is a directory"), std::string::npos);
  std::string missing = (dir_ / "missing").string();
  EXPECT_EQ(Error(missing), "token-file: cannot read " + missing);
}

}  // namespace
}  // namespace ax::server
