// The job-body parser (SPEC 5.3, 3.4) as a pure function.
#include "server/job_body.h"

#include <gtest/gtest.h>

#include "server/url.h"

namespace ax::server {
namespace {

TEST(JobBody, Api_5_3_FullExampleParses) {
  auto j = ParseJobBody(R"({"id": "order-1001",
 "schedule": {"in": "PT30M"},
 "target": {"http": {"method": "POST", "url": "http://127.0.0.1:9000/close",
                     "headers": {"Content-Type": "application/json"},
                     "body": "{\"order\":\"1001\"}"}},
 "retry": {"max_attempts": 5, "backoff": "exponential", "base": "1s",
           "cap": "1m", "jitter": true},
 "timeout": "30s"})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->id, "order-1001");
  EXPECT_EQ(j->kind, JobKind::kOnce);
  EXPECT_EQ(j->delay, std::chrono::minutes(30));
  EXPECT_EQ(j->handler, "http");
  EXPECT_EQ(j->retry.max_attempts, 5);
  EXPECT_EQ(j->retry.backoff, Backoff::kExponential);
  EXPECT_EQ(j->retry.cap, std::chrono::minutes(1));
  EXPECT_TRUE(j->retry.jitter);
  EXPECT_EQ(j->timeout, std::chrono::seconds(30));
  auto t = ParseHttpTarget(j->payload);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->host, "127.0.0.1");
  EXPECT_EQ(t->port, "9000");
  EXPECT_EQ(t->path, "/close");
  EXPECT_EQ(t->timeout, std::chrono::seconds(30));
}

TEST(JobBody, Api_3_4_ExactlyOneScheduleField) {
  auto j = ParseJobBody(R"({"schedule":{},"target":{"http":{"url":"http://h/"}}})");
  EXPECT_NE(j.status().message().find("schedule"), std::string::npos);
  j = ParseJobBody(
      R"({"schedule":{"at":"2030-01-01T00:00:00Z","in":"1s"},"target":{"http":{"url":"http://h/"}}})");
  EXPECT_EQ(j.status().message().rfind("schedule:", 0), 0u) << j.status().message();
  j = ParseJobBody(
      R"({"schedule":{"every":"10s","tz":"UTC"},"target":{"http":{"url":"http://h/"}}})");
  EXPECT_FALSE(j.ok());
  j = ParseJobBody(
      R"({"schedule":{"cron":"*/5 * * * *","tz":"Europe/Paris"},"target":{"http":{"url":"http://h/"}}})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->kind, JobKind::kCron);
  EXPECT_EQ(j->tz, "Europe/Paris");
}

TEST(JobBody, Api_5_3_ErrorsNameTheField) {
  struct Case {
    const char* body;
    const char* field;
  } cases[] = {
      {"[1,2]", "body"},
      {R"({"id":"a","id":"b","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}}})",
       "body"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/","headers":{"A":"1","A":"2"}}}})",
       "body"},
      {"", "body"},
      {R"({"schedule":{"in":"1s"}})", "target"},
      {R"({"target":{"http":{"url":"http://h/"}}})", "schedule"},
      {R"({"schedule":{"in":1},"target":{"http":{"url":"http://h/"}}})", "schedule.in"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/","x":1}}})", "target.http.x"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/","headers":{"a b":"c"}}}})",
       "target.http.headers.a b"},
      {R"({"schedule":{"in":"1s"},"target":{"smtp":{}}})", "target.smtp"},
      {R"({"schedule":{"in":"1s"},"target":{"exec":{"argv":[]}}})", "target.exec.argv"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"retry":{"max_attempts":0}})",
       "retry.max_attempts"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"overlap":"often"})",
       "overlap"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"misfire":"never"})",
       "misfire"},
      {R"({"schedule":{"in":"1s"},"target":{"http":{"url":"http://h:99999/"}}})",
       "target.http.url"},
  };
  for (const auto& c : cases) {
    auto j = ParseJobBody(c.body);
    ASSERT_FALSE(j.ok()) << c.body;
    EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
    std::string want = std::string(c.field) + ":";
    EXPECT_EQ(j.status().message().rfind(want, 0), 0u) << c.body << " -> " << j.status().message();
  }
}

// A URL's host: a name, an IPv4 address or an IPv6 address in brackets; a
// query without a path; a fragment, which is not sent.
TEST(JobBody, Api_5_3_HttpUrls) {
  struct Good {
    const char* url;
    const char* host;
    const char* port;
    const char* path;
  } good[] = {
      {"http://h", "h", "80", "/"},
      {"http://127.0.0.1:9000/close", "127.0.0.1", "9000", "/close"},
      {"http://[::1]:8080/x?y=1", "::1", "8080", "/x?y=1"},
      {"http://[fe80::1]/", "fe80::1", "80", "/"},
      {"http://my_host.example-1.com?x=1", "my_host.example-1.com", "80", "/?x=1"},
      {"http://h/p#frag", "h", "80", "/p"},
  };
  for (const auto& g : good) {
    HttpTargetSpec s;
    Status st = SplitHttpUrl(g.url, "url", s);
    ASSERT_TRUE(st.ok()) << g.url << ": " << st.ToString();
    EXPECT_EQ(s.host, g.host) << g.url;
    EXPECT_EQ(s.port, g.port) << g.url;
    EXPECT_EQ(s.path, g.path) << g.url;
  }
  for (const char* bad : {"http://exa mple.com/", "http://[::1/", "http://[zz]/", "http://[::1]x/",
                          "http://h:/", "http://h:0/", "http://:80/", "http:///x", "http://a,b/",
                          "http://u@h/", "http://h%41/", "ftp://h/"}) {
    HttpTargetSpec s;
    Status st = SplitHttpUrl(bad, "target.http.url", s);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(st.message().rfind("target.http.url: ", 0), 0u) << bad << " -> " << st.message();
  }
}

TEST(JobBody, Cli_5_4_ServerUrls) {
  std::string host, port, base;
  ASSERT_TRUE(ParseServerUrl("http://[::1]:7070/ax/", host, port, base).ok());
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, "7070");
  EXPECT_EQ(base, "/ax");
  ASSERT_TRUE(ParseServerUrl("http://localhost", host, port, base).ok());
  EXPECT_EQ(port, "80");
  Status st = ParseServerUrl("http://local host:7070", host, port, base);
  EXPECT_EQ(st.message().rfind("server: ", 0), 0u) << st.message();
}

// nlohmann keeps the last of two equal keys; a body that has them is refused.
TEST(JobBody, Api_5_3_AKeyTwiceInOneObjectIsRefused) {
  auto j = ParseJobBody(
      R"({"id":"a","schedule":{"in":"1s"},"id":"b","target":{"http":{"url":"http://h/"}}})");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().message(), R"(body: the key "id" appears twice in one object)");
  // The same key in two objects is fine.
  EXPECT_TRUE(
      ParseJobBody(R"({"id":"a","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/",)"
                   R"("headers":{"id":"x"}}}})")
          .ok());
}

TEST(JobBody, Api_5_3_BatchAndPatch) {
  auto b = ParseJobsBody(R"({"jobs":[{"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}}},
                                     {"schedule":{"every":"x"},"target":{"http":{"url":"http://h/"}}}]})");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message().rfind("jobs[1].schedule.every:", 0), 0u) << b.status().message();
  auto p = ParsePatchBody(R"({"period":"5m"})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, JobPatch::Kind::kPeriod);
  EXPECT_FALSE(ParsePatchBody(R"({"tz":"UTC"})").ok());
  EXPECT_FALSE(ParsePatchBody(R"({"period":"0s"})").ok());
  EXPECT_FALSE(ParsePatchBody(R"({"cron":"bad"})").ok());
}

TEST(JobBody, Api_5_3_JobJsonRoundTripsTheSpec) {
  auto j = ParseJobBody(
      R"({"id":"a","schedule":{"every":"10s"},"target":{"exec":{"argv":["/bin/echo","hi"]}}})");
  ASSERT_TRUE(j.ok());
  std::string out = JobToJson(*j);
  EXPECT_NE(out.find(R"("schedule":{"every":"10s"})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("argv":["/bin/echo","hi"])"), std::string::npos) << out;
  EXPECT_TRUE(SameSpec(
      *j,
      *ParseJobBody(
          R"({"id":"a","schedule":{"every":"10s"},"target":{"exec":{"argv":["/bin/echo","hi"]}}})")));
}

}  // namespace
}  // namespace ax::server
