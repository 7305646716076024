// The HTTP API (SPEC 5.3, 5.5) over real loopback HTTP: every endpoint and
// error code.
#include "server/api.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ax/durable.h"

#include "server/http_client.h"
#include "server/http_server.h"
#include "server/targets.h"

namespace ax::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class ApiTest : public ::testing::Test {
 protected:
  void Start(std::string token = "", bool allow_exec = false) {
    DurableOptions o;
    o.store = std::make_shared<MemoryStore>();
    o.engine.workers = 2;
    d_ = DurableScheduler::Create(std::move(o)).value();
    ASSERT_TRUE(RegisterTargets(*d_, allow_exec).ok());
    ASSERT_TRUE(d_->Start().ok());
    api_ = std::make_unique<Api>(*d_, ApiOptions{std::move(token), allow_exec});
    HttpServerOptions ho;
    ho.port = 0;
    ho.body_limit = size_t{64} * 1024;
    http_ = std::make_unique<HttpServer>(*api_, ho);
    ASSERT_TRUE(http_->Start().ok());
  }
  void TearDown() override {
    if (http_) http_->Stop();
    if (d_) (void)d_->Shutdown(1s);
  }
  struct Res {
    int status;
    json body;
    std::string raw;
  };
  Res Call(const std::string& method, const std::string& path, const std::string& body = "",
           const std::string& auth = "") {
    ClientRequest r;
    r.method = method;
    r.host = "127.0.0.1";
    r.port = std::to_string(http_->port());
    r.target = path;
    r.body = body;
    if (!auth.empty()) r.headers.emplace_back("Authorization", auth);
    auto res = HttpDo(r, 10s);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    if (!res.ok()) return {0, {}, ""};
    return {res->status, json::parse(res->body, nullptr, false), res->body};
  }
  static std::string JobBody(const std::string& id, const std::string& sched = R"({"in":"1h"})") {
    return R"({"id":")" + id + R"(","schedule":)" + sched +
           R"(,"target":{"http":{"url":"http://127.0.0.1:9/x"}}})";
  }
  std::string Field(const Res& r) { return r.body["error"].value("field", ""); }
  // Sends `bytes` as they are and returns all the server writes back.
  std::string Raw(const std::string& bytes) {
    namespace net = boost::asio;
    net::io_context io;
    net::ip::tcp::socket s(io);
    s.connect({net::ip::address_v4::loopback(), http_->port()});
    net::write(s, net::buffer(bytes));
    std::string out;
    boost::system::error_code ec;
    net::read(s, net::dynamic_buffer(out), ec);  // until the server closes
    return out;
  }

  std::unique_ptr<DurableScheduler> d_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> http_;
};

TEST_F(ApiTest, Api_5_3_Healthz) {
  Start();
  auto r = Call("GET", "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["status"], "ok");
}

TEST_F(ApiTest, Api_5_3_CreateGetAndIdempotentResubmit) {
  Start();
  auto c = Call("POST", "/v1/jobs", JobBody("order-1"));
  ASSERT_EQ(c.status, 201) << c.raw;
  EXPECT_EQ(c.body["id"], "order-1");
  EXPECT_EQ(c.body["state"], "waiting");
  EXPECT_TRUE(c.body["next_run"].is_string());
  auto g = Call("GET", "/v1/jobs/order-1");
  ASSERT_EQ(g.status, 200);
  EXPECT_EQ(g.body["target"]["http"]["url"], "http://127.0.0.1:9/x");
  EXPECT_EQ(Call("POST", "/v1/jobs", JobBody("order-1")).status, 200);  // same spec: idempotent
  auto conflict = Call("POST", "/v1/jobs", JobBody("order-1", R"({"in":"2h"})"));
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.body["error"]["code"], "AlreadyExists");
}

TEST_F(ApiTest, Api_5_3_GeneratedIdWhenAbsent) {
  Start();
  auto c = Call("POST", "/v1/jobs",
                R"({"schedule":{"every":"1h"},"target":{"http":{"url":"http://127.0.0.1:9/"}}})");
  ASSERT_EQ(c.status, 201) << c.raw;
  EXPECT_FALSE(c.body["id"].get<std::string>().empty());
}

TEST_F(ApiTest, Api_5_3_BadBodiesAre400NamingTheField) {
  Start();
  auto r = Call("POST", "/v1/jobs", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "body");
  r = Call("POST", "/v1/jobs",
           R"({"id":"a","bogus":1,"schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "bogus");
  r = Call("POST", "/v1/jobs", JobBody("a", R"({"in":"1s","every":"1s"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "schedule");
  r = Call("POST", "/v1/jobs", JobBody("a", R"({"in":"soon"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "schedule.in");
  r = Call("POST", "/v1/jobs", JobBody("a", R"({"cron":"61 * * * *"})"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "schedule.cron");
  r = Call("POST", "/v1/jobs",
           R"({"id":"a","schedule":{"in":"1s"},"target":{"http":{"url":"ftp://h/"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "target.http.url");
  r = Call(
      "POST", "/v1/jobs",
      R"({"id":"a","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"timeout":"-1s"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "timeout");
  r = Call(
      "POST", "/v1/jobs",
      R"({"id":"a","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"retry":{"backoff":"sometimes"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "retry.backoff");
  r = Call("POST", "/v1/jobs",
           R"({"id":"bad id","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "id");
  r = Call(
      "POST", "/v1/jobs",
      R"({"id":"c","schedule":{"in":"1s"},"target":{"http":{"url":"http://h/"}},"parent":"nobody"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "parent");
}

TEST_F(ApiTest, Api_5_5_HugeBodyIs413) {
  Start();
  std::string big = JobBody("big");
  big.insert(big.size() - 1, ",\"pad\":\"" + std::string(size_t{100} * 1024, 'x') + "\"");
  EXPECT_EQ(Call("POST", "/v1/jobs", big).status, 413);
  EXPECT_EQ(Call("GET", "/healthz").status, 200);  // a new connection works
}

TEST_F(ApiTest, Api_5_3_BatchForm) {
  Start();
  std::string body = "{\"jobs\":[" + JobBody("b1") + "," + JobBody("b2") + "]}";
  auto r = Call("POST", "/v1/jobs", body);
  ASSERT_EQ(r.status, 201) << r.raw;
  ASSERT_EQ(r.body["jobs"].size(), 2u);
  EXPECT_EQ(r.body["jobs"][0]["result"], "created");
  r = Call("POST", "/v1/jobs", body);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["jobs"][1]["result"], "exists");
  r = Call("POST", "/v1/jobs", "{\"jobs\":[" + JobBody("d") + "," + JobBody("d") + "]}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "jobs[1].id");
  r = Call("POST", "/v1/jobs", "{\"jobs\":[" + JobBody("e", R"({"every":"0s"})") + "]}");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "jobs[0].schedule.every");
}

TEST_F(ApiTest, Api_2_3_CancelPauseResumeAndPatch) {
  Start();
  ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("p", R"({"every":"1h"})")).status, 201);
  auto r = Call("POST", "/v1/jobs/p/pause");
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["state"], "paused");
  EXPECT_EQ(Call("POST", "/v1/jobs/p/pause").status, 409);
  r = Call("POST", "/v1/jobs/p/resume");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["state"], "waiting");
  EXPECT_EQ(Call("POST", "/v1/jobs/p/resume").status, 409);
  const json next_run = Call("GET", "/v1/jobs/p").body["next_run"];
  r = Call("PATCH", "/v1/jobs/p", R"({"period":"30m"})");
  EXPECT_EQ(r.status, 200) << r.raw;
  // The job shows the schedule it runs on now (it showed the submitted one).
  EXPECT_EQ(r.body["schedule"], json::parse(R"({"every":"30m"})")) << r.raw;
  EXPECT_EQ(r.body["next_run"], next_run);  // 2.3: the next run stays
  r = Call("PATCH", "/v1/jobs/p", R"({"delay":"10s"})");
  EXPECT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(Call("GET", "/v1/jobs/p").body["schedule"], json::parse(R"({"every":"30m"})"));
  r = Call("PATCH", "/v1/jobs/p", R"({"delay":"10s","period":"1s"})");
  EXPECT_EQ(r.status, 400);
  r = Call("PATCH", "/v1/jobs/p", R"({"delay":"later"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "delay");
  r = Call("PATCH", "/v1/jobs/p", R"({"cron":"0 * * * *"})");
  EXPECT_EQ(r.status, 409);  // not a cron job
  ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("c", R"({"cron":"0 * * * *"})")).status, 201);
  r = Call("PATCH", "/v1/jobs/c", R"({"cron":"30 * * * *","tz":"Europe/Paris"})");
  EXPECT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(Call("GET", "/v1/jobs/c").body["schedule"],
            json::parse(R"({"cron":"30 * * * *","tz":"Europe/Paris"})"));
  r = Call("DELETE", "/v1/jobs/p");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["state"], "cancelled");
  EXPECT_EQ(Call("DELETE", "/v1/jobs/p").status, 409);
  EXPECT_EQ(Call("DELETE", "/v1/jobs/nobody").status, 404);
  EXPECT_EQ(Call("GET", "/v1/jobs/nobody").status, 404);
  EXPECT_EQ(Call("POST", "/v1/jobs/nobody/pause").status, 404);
  EXPECT_EQ(Call("PATCH", "/v1/jobs/nobody", R"({"delay":"1s"})").status, 404);
}

TEST_F(ApiTest, Api_5_3_ListFiltersAndPages) {
  Start();
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("l" + std::to_string(i))).status, 201);
  }
  ASSERT_EQ(Call("POST", "/v1/jobs/l2/pause").status, 200);
  auto r = Call("GET", "/v1/jobs?limit=3");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body["jobs"].size(), 3u);
  EXPECT_EQ(r.body["next_cursor"], "l2");
  r = Call("GET", "/v1/jobs?limit=3&cursor=l2");
  EXPECT_EQ(r.body["jobs"].size(), 2u);
  EXPECT_TRUE(r.body["next_cursor"].is_null());
  r = Call("GET", "/v1/jobs?state=paused");
  ASSERT_EQ(r.body["jobs"].size(), 1u);
  EXPECT_EQ(r.body["jobs"][0]["id"], "l2");
  EXPECT_EQ(Field(Call("GET", "/v1/jobs?state=sleepy")), "state");
  EXPECT_EQ(Field(Call("GET", "/v1/jobs?limit=0")), "limit");
  EXPECT_EQ(Field(Call("GET", "/v1/jobs?colour=red")), "colour");
}

TEST_F(ApiTest, Api_5_3_StatsAndMetrics) {
  Start();
  ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("s")).status, 201);
  auto s = Call("GET", "/v1/stats");
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(s.body["jobs"]["waiting"], 1);
  auto m = Call("GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  for (const char* name :
       {"ax_jobs_pending", "ax_jobs_running", "ax_runs_fired_total", "ax_runs_succeeded_total",
        "ax_runs_failed_total", "ax_runs_retried_total", "ax_jobs_dead_total",
        "ax_lateness_seconds_bucket", "ax_store_commit_seconds_bucket",
        "ax_scheduler_wakeups_total", "ax_jobs_handed_ahead_total", "ax_runs_started_ahead_total",
        "ax_runs_fired_by_workers_total"}) {
    EXPECT_NE(m.raw.find(name), std::string::npos) << name;
  }
}

// How the engine started its runs (handed ahead to a worker, fired by a worker
// in a storm) is in the stats, as the engine counts it.
TEST_F(ApiTest, Api_5_3_StatsSayHowRunsStarted) {
  Start();
  ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("soon", R"({"in":"0s"})")).status, 201);
  ASSERT_TRUE(d_->engine().WaitIdle());                           // its run is over
  ASSERT_EQ(Call("GET", "/v1/jobs/soon").body["state"], "dead");  // port 9 refuses
  const ax::Stats e = d_->GetStats().engine;
  ASSERT_EQ(e.fired, 1u);
  const json s = Call("GET", "/v1/stats").body["engine"];
  EXPECT_EQ(s["fired"], e.fired);
  EXPECT_EQ(s["handed_ahead"], e.handed_ahead);
  EXPECT_EQ(s["started_ahead"], e.started_ahead);
  EXPECT_EQ(s["fired_by_workers"], e.fired_by_workers);
  EXPECT_GT(s["wakeups"].get<uint64_t>(), 0u);
}

TEST_F(ApiTest, Api_5_5_TokenIsRequiredButNotForHealthz) {
  Start("s3cret");
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_EQ(Call("GET", "/v1/stats").status, 401);
  EXPECT_EQ(Call("GET", "/v1/stats", "", "Bearer wrong").status, 401);
  EXPECT_EQ(Call("GET", "/metrics", "", "Basic s3cret").status, 401);
  EXPECT_EQ(Call("POST", "/v1/jobs", JobBody("t"), "Bearer s3cret").status, 201);
  EXPECT_EQ(Call("GET", "/v1/jobs/t", "", "Bearer s3cret").status, 200);
}

TEST_F(ApiTest, Api_5_5_DrainingAnswers503) {
  Start();
  api_->SetDraining();
  EXPECT_EQ(Call("GET", "/healthz").status, 503);
  EXPECT_EQ(Call("POST", "/v1/jobs", JobBody("late")).status, 503);
}

TEST_F(ApiTest, Api_5_2_ExecIsRefusedWithoutAllowExec) {
  Start();
  auto r = Call("POST", "/v1/jobs",
                R"({"id":"x","schedule":{"in":"1s"},"target":{"exec":{"argv":["/bin/true"]}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), "target.exec");
}

TEST_F(ApiTest, Api_5_2_ExecRunsWithAllowExec) {
  Start("", true);
  auto r = Call("POST", "/v1/jobs",
                R"({"id":"x","schedule":{"in":"0s"},"target":{"exec":{"argv":["/bin/true"]}}})");
  ASSERT_EQ(r.status, 201) << r.raw;
  ASSERT_TRUE(d_->engine().WaitIdle());  // the child has exited
  EXPECT_EQ(Call("GET", "/v1/jobs/x").body["state"], "completed");
  r = Call("POST", "/v1/jobs",
           R"({"id":"y","schedule":{"in":"0s"},"target":{"exec":{"argv":["/bin/false"]}}})");
  ASSERT_EQ(r.status, 201);
  ASSERT_TRUE(d_->engine().WaitIdle());
  auto y = Call("GET", "/v1/jobs/y");
  EXPECT_EQ(y.body["state"], "dead");
  EXPECT_NE(y.body.value("last_error", "").find("exit status 1"), std::string::npos) << y.raw;
}

TEST_F(ApiTest, Api_5_3_UnknownRouteAndMethod) {
  Start();
  EXPECT_EQ(Call("GET", "/v2/nothing").status, 404);
  EXPECT_EQ(Call("PUT", "/v1/jobs").status, 405);
  EXPECT_EQ(Call("POST", "/healthz").status, 405);
}

// A byte that is not UTF-8, percent-encoded in a query key or a job id, is
// echoed in the error as U+FFFD. It used to throw out of the handler and end
// the daemon (std::terminate).
TEST_F(ApiTest, Api_5_3_BytesThatAreNotUtf8GetAnErrorNotACrash) {
  Start();
  const std::string replacement = "\xEF\xBF\xBD";
  auto r = Call("GET", "/v1/jobs?%FF=1");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Field(r), replacement);
  r = Call("GET", "/v1/jobs/a%FFb");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body["error"].value("message", "").find("a" + replacement + "b"), std::string::npos)
      << r.raw;
  EXPECT_EQ(Call("POST", "/v1/jobs/%C3/pause").status, 404);
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

// A request that is not HTTP gets a 400 naming what is wrong, then the
// connection closes (it used to close with no answer at all).
TEST_F(ApiTest, Api_5_3_MalformedRequestsAre400) {
  Start();
  for (const std::string& bytes :
       {std::string("GARBAGE\r\n\r\n"), std::string("GET / HTTP/0.9\r\n\r\n"),
        std::string("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n"),
        std::string(
            "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")}) {
    const std::string res = Raw(bytes);
    EXPECT_EQ(res.substr(0, 25), "HTTP/1.1 400 Bad Request\r") << bytes;
    EXPECT_NE(res.find(R"("field":"request")"), std::string::npos) << res;
  }
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

// HEAD works wherever GET does (RFC 9110 9.3.2: it was a 405 but on
// /healthz), with GET's Content-Length and no body; the connection goes on.
TEST_F(ApiTest, Api_5_3_HeadIsGetWithoutTheBody) {
  Start();
  ASSERT_EQ(Call("POST", "/v1/jobs", JobBody("h1")).status, 201);
  const std::string res =
      Raw("HEAD /v1/jobs/h1 HTTP/1.1\r\nHost: x\r\n\r\n"
          "GET /v1/jobs/h1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const size_t second = res.find("HTTP/1.1", 1);
  ASSERT_NE(second, std::string::npos) << res;
  const std::string head = res.substr(0, second);
  const std::string get = res.substr(second);
  EXPECT_EQ(head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << head;
  EXPECT_EQ(get.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << get;
  const size_t get_body = get.find("\r\n\r\n") + 4;
  EXPECT_EQ(head.size(), head.find("\r\n\r\n") + 4) << "HEAD sent a body: " << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(get.size() - get_body) + "\r\n"),
            std::string::npos)
      << head << get;
  for (const char* path : {"/v1/jobs", "/v1/stats", "/metrics", "/healthz"}) {
    const std::string r =
        Raw(std::string("HEAD ") + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << path << ": " << r;
  }
}

// A body in a transfer coding the daemon cannot undo gets 501 Not
// Implemented (RFC 9112 6.1); it was read as chunked and its gzip parsed as
// JSON.
TEST_F(ApiTest, Api_5_3_AnUnknownTransferCodingIs501) {
  Start();
  const std::string res =
      Raw("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
          "2\r\n{}\r\n0\r\n\r\n");
  EXPECT_EQ(res.substr(0, 30), "HTTP/1.1 501 Not Implemented\r\n") << res;
  EXPECT_NE(res.find("only chunked"), std::string::npos) << res;
  const std::string body = JobBody("chunked");
  char size[16];
  std::snprintf(size, sizeof size, "%zx", body.size());
  const std::string ok =
      Raw("POST /v1/jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n"
          "Connection: close\r\n\r\n" +
          std::string(size) + "\r\n" + body + "\r\n0\r\n\r\n");
  EXPECT_EQ(ok.substr(0, 22), "HTTP/1.1 201 Created\r\n") << ok;
}

// A client that sends "Expect: 100-continue" waits for 100 Continue before
// its body (curl does over 1 MB, and waited a second each time); one whose
// body is over the limit gets 413 without sending it.
TEST_F(ApiTest, Api_5_3_ExpectContinueIsAnswered) {
  Start();
  namespace net = boost::asio;
  const std::string body = JobBody("continued");
  auto head = [](size_t length) {
    return "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: "
           "close\r\nContent-Length: " +
           std::to_string(length) + "\r\n\r\n";
  };
  net::io_context io;
  net::ip::tcp::socket s(io);
  s.connect({net::ip::address_v4::loopback(), http_->port()});
  net::write(s, net::buffer(head(body.size())));
  std::string got;
  net::read_until(s, net::dynamic_buffer(got), "\r\n\r\n");  // before any body byte
  EXPECT_EQ(got, "HTTP/1.1 100 Continue\r\n\r\n");
  net::write(s, net::buffer(body));
  got.clear();
  boost::system::error_code ec;
  net::read(s, net::dynamic_buffer(got), ec);
  EXPECT_EQ(got.rfind("HTTP/1.1 201 Created\r\n", 0), 0u) << got;

  net::ip::tcp::socket big(io);
  big.connect({net::ip::address_v4::loopback(), http_->port()});
  net::write(big, net::buffer(head(size_t{1} << 20)));  // the test's limit is 64 KiB
  got.clear();
  net::read(big, net::dynamic_buffer(got), ec);
  EXPECT_EQ(got.rfind("HTTP/1.1 413 Payload Too Large\r\n", 0), 0u) << got;
}

}  // namespace
}  // namespace ax::server
