// The daemon's targets (SPEC 5.2) against receivers that misbehave: a
// scripted peer on loopback answers each connection as a test tells it to.
#include "server/targets.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ax/instant.h"

#include "server/http_client.h"

namespace ax::server {
namespace {

using namespace std::chrono_literals;

// Listens on loopback and runs `answer(fd, request)` for each request of
// each connection in turn, the request read up to the end of its headers and
// its Content-Length. The connection stays open while `answer` returns true.
// `answer` may block in Hold() until Release().
class ScriptedPeer {
 public:
  using Answer = std::function<bool(int fd, const std::string& request)>;

  // False when the address family is not available here.
  bool Listen(bool v6, Answer answer) {
    answer_ = std::move(answer);
    listen_fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return false;
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      len = sizeof(*a);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof(*a);
    }
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) {
      return false;
    }
    port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    thread_ = std::thread([this] { Serve(); });
    return true;
  }

  ~ScriptedPeer() {
    Release();
    {
      std::lock_guard<std::mutex> l(mu_);
      stopping_ = true;
      if (conn_fd_ >= 0) ::shutdown(conn_fd_, SHUT_RDWR);  // a client may keep it open
    }
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);
    if (thread_.joinable()) thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  // Lets every answer waiting in Hold() go on.
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  // Blocks an answer until Release(); true if released within `t`.
  bool Hold(std::chrono::milliseconds t) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, t, [this] { return released_; });
  }

  int port() const { return port_; }
  int connections() const { return connections_.load(); }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      connections_.fetch_add(1);
      {
        std::lock_guard<std::mutex> l(mu_);
        if (stopping_) ::shutdown(fd, SHUT_RDWR);
        conn_fd_ = fd;
      }
      std::string buf;
      for (;;) {
        std::string req = ReadRequest(fd, buf);
        if (req.empty()) break;
        {
          std::lock_guard<std::mutex> l(mu_);
          requests_.push_back(req);
        }
        if (!answer_(fd, req)) break;
      }
      std::lock_guard<std::mutex> l(mu_);
      conn_fd_ = -1;
      ::close(fd);
    }
  }

  static std::string ReadRequest(int fd, std::string& buf) {
    char chunk[4096];
    for (;;) {
      size_t end = buf.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t body = 0;
        size_t cl = buf.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) body = std::stoul(buf.substr(cl + 16));
        if (buf.size() >= end + 4 + body) {
          std::string req = buf.substr(0, end + 4 + body);
          buf.erase(0, req.size());
          return req;
        }
      }
      ssize_t n = ::recv(fd, chunk, sizeof(chunk), 0);
      if (n <= 0) return "";
      buf.append(chunk, static_cast<size_t>(n));
    }
  }

  Answer answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  bool stopping_ = false;
  int conn_fd_ = -1;  // the connection being served
  std::vector<std::string> requests_;
};

// True if all of `bytes` went.
bool Send(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

constexpr std::string_view kOk = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

std::string HttpPayload(const std::string& url, const std::string& timeout = "5s") {
  return R"({"method":"PUT","url":")" + url +
         R"(","headers":{"X-Order":"1001"},"body":"{\"order\":1001}","timeout":")" + timeout +
         R"("})";
}

Status RunHttp(const std::string& payload, int attempt = 1) {
  std::atomic<bool> stop{false};
  RunContext ctx(JobId{}, "order-1001", attempt, Instant(std::chrono::seconds(1'800'000'000)),
                 StopToken(&stop));
  return RunHttpTarget(ctx, payload);
}

std::string Url(const ScriptedPeer& p, const std::string& path = "/close") {
  return "http://127.0.0.1:" + std::to_string(p.port()) + path;
}

TEST(TargetsTest, Targets_5_2_HttpSendsTheRequestTheAxHeadersAndAHostWithItsPort) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) { return Send(fd, kOk); }));
  Status s = RunHttp(HttpPayload(Url(peer, "/close?x=1#frag")), 3);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(peer.requests().size(), 1u);
  const std::string r = peer.requests()[0];
  EXPECT_EQ(r.rfind("PUT /close?x=1 HTTP/1.1\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("\r\nHost: 127.0.0.1:" + std::to_string(peer.port()) + "\r\n"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("\r\nX-Order: 1001\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\nAx-Job-Id: order-1001\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\nAx-Attempt: 3\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\nAx-Scheduled-At: 2027-01-15T08:00:00Z\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.size() - 14), R"({"order":1001})");
}

TEST(TargetsTest, Targets_5_2_HttpToAnIpv6Literal) {
  ScriptedPeer peer;
  if (!peer.Listen(true, [](int fd, const std::string&) { return Send(fd, kOk); })) {
    GTEST_SKIP() << "no IPv6 loopback here";
  }
  const std::string port = std::to_string(peer.port());
  Status s = RunHttp(HttpPayload("http://[::1]:" + port + "/v6"));
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(peer.requests().size(), 1u);
  EXPECT_NE(peer.requests()[0].find("\r\nHost: [::1]:" + port + "\r\n"), std::string::npos);
}

TEST(TargetsTest, Targets_5_2_HttpStatusOutside2xxFailsTheRunNamingIt) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) {
    return Send(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n");
  }));
  Status s = RunHttp(HttpPayload(Url(peer)));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("http 503"), std::string::npos) << s.ToString();
}

TEST(TargetsTest, Targets_5_2_HttpReceiverThatNeverAnswersTimesOut) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [&](int, const std::string&) { return peer.Hold(60s); }));
  Status s = RunHttp(HttpPayload(Url(peer), "200ms"));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
}

// A stop request (cancel, the daemon's drain) ends a webhook waiting for its
// answer long before the request's timeout, here 60 s.
TEST(TargetsTest, Targets_5_2_HttpStopEndsARequestWaitingForItsAnswer) {
  ScriptedPeer peer;
  std::atomic<bool> stop{false};
  ASSERT_TRUE(peer.Listen(false, [&](int, const std::string&) {
    stop = true;  // the request is in: its sender waits for the answer
    return peer.Hold(60s);
  }));
  RunContext ctx(JobId{}, "order-1001", 1, Instant(), StopToken(&stop));
  Status s = RunHttpTarget(ctx, HttpPayload(Url(peer), "60s"));
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_NE(s.message().find("stopped"), std::string::npos) << s.ToString();
}

// Each byte comes before the socket's timeout: only the request's own
// deadline ends it.
TEST(TargetsTest, Targets_5_2_HttpReceiverThatTricklesIsCutAtTheTimeout) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [&](int fd, const std::string&) {
    Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
    while (!peer.Hold(20ms)) Send(fd, "x");
    return false;
  }));
  Status s = RunHttp(HttpPayload(Url(peer), "300ms"));
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
}

TEST(TargetsTest, Targets_5_2_HttpResponseOverTheBodyLimitIsAnError) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) {
    Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n");
    return false;
  }));
  Status s = RunHttp(HttpPayload(Url(peer)));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

// Interim responses come before the final one, in one segment with it or
// not; only the final one counts (it used to fail the run as "http 100").
TEST(TargetsTest, Targets_5_2_HttpSkipsInterimResponses) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) {
    Send(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    return Send(fd, "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" + std::string(kOk));
  }));
  for (int i = 0; i < 2; ++i) {
    Status s = RunHttp(HttpPayload(Url(peer)));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(peer.connections(), 1);  // and the connection stays usable
}

// The receiver keeps no connection alive though it said nothing of it: the
// next run finds its pooled connection closed and opens another.
TEST(TargetsTest, Targets_5_2_HttpPooledConnectionClosedByTheReceiverIsReplaced) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) {
    Send(fd, kOk);
    return false;
  }));
  for (int i = 0; i < 3; ++i) {
    Status s = RunHttp(HttpPayload(Url(peer)));
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  EXPECT_EQ(peer.requests().size(), 3u);
  EXPECT_EQ(peer.connections(), 3);
}

TEST(TargetsTest, Targets_5_2_HttpKeepsTheConnectionAlive) {
  ScriptedPeer peer;
  ASSERT_TRUE(peer.Listen(false, [](int fd, const std::string&) { return Send(fd, kOk); }));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunHttp(HttpPayload(Url(peer))).ok());
  EXPECT_EQ(peer.connections(), 1);
}

// A resolver for the name "moved.example" that answers 127.0.0.1 at the
// port the test says, counting its calls.
std::atomic<int> moved_port{0};
std::atomic<int> lookups{0};
int ResolveMoved(const char* host, const char*, const addrinfo* hints, addrinfo** res) {
  if (std::string_view(host) != "moved.example") return EAI_NONAME;
  lookups.fetch_add(1);
  return ::getaddrinfo("127.0.0.1", std::to_string(moved_port.load()).c_str(), hints, res);
}

// The name's addresses are kept between connections, and looked up again
// once a connection to them fails: a receiver that moved is found.
TEST(TargetsTest, Targets_5_2_HttpLooksANameUpAgainWhenItsAddressFails) {
  SetResolverForTest(&ResolveMoved);
  auto closing = [](int fd, const std::string&) {
    Send(fd, kOk);
    return false;
  };
  const std::string payload = HttpPayload("http://moved.example:1/x");
  auto old_home = std::make_unique<ScriptedPeer>();
  ASSERT_TRUE(old_home->Listen(false, closing));
  moved_port = old_home->port();
  ASSERT_TRUE(RunHttp(payload).ok());
  ASSERT_TRUE(RunHttp(payload).ok());
  EXPECT_EQ(old_home->connections(), 2);
  EXPECT_EQ(lookups.load(), 1);

  ScriptedPeer new_home;
  ASSERT_TRUE(new_home.Listen(false, closing));
  old_home.reset();
  moved_port = new_home.port();
  EXPECT_EQ(RunHttp(payload).code(), StatusCode::kUnavailable);  // the old address refuses
  Status s = RunHttp(payload);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(new_home.connections(), 1);
  EXPECT_EQ(lookups.load(), 2);
  SetResolverForTest(nullptr);
}

// True once `pid`, which is not our child, has ended, within 10 s: its
// pidfd turns readable when it exits, and it may be gone already.
bool Ends(pid_t pid) {
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  const bool ended = ::poll(&p, 1, 10'000) == 1;
  ::close(fd);
  return ended;
}

// A timed-out command ends with what it started: `sh -c` leaves a child
// that kill(pid) alone would orphan.
TEST(TargetsTest, Targets_5_2_ExecTimeoutEndsTheCommandsChildrenToo) {
  char dir[] = "/tmp/ax-exec-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string pid_file = std::string(dir) + "/child.pid";
  std::atomic<bool> stop{false};
  RunContext ctx(JobId{}, "exec-1", 1, Instant(), StopToken(&stop));
  Status s = RunExecTarget(ctx, R"({"argv":["sh","-c","sleep 600 & echo $! > )" + pid_file +
                                    R"(; wait"],"timeout":"300ms"})");
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  // SIGKILL was sent before RunExecTarget returned; the kernel ends the
  // process as soon as it runs.
  const bool ended = Ends(child);
  EXPECT_TRUE(ended) << "the command's child " << child << " outlived its timeout";
  if (!ended) ::kill(child, SIGKILL);
  std::remove(pid_file.c_str());
  ::rmdir(dir);
}

// The daemon blocks SIGTERM and SIGINT in its threads and ignores SIGPIPE; a
// command starts with no signal blocked or ignored all the same (it inherited
// both, so `sleep 5 & kill $!` in a command left the sleep running).
TEST(TargetsTest, Targets_5_2_ExecStartsWithTheSignalsOfAFreshProcess) {
  sigset_t daemon_mask, old_mask;
  sigemptyset(&daemon_mask);
  sigaddset(&daemon_mask, SIGTERM);
  sigaddset(&daemon_mask, SIGINT);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &daemon_mask, &old_mask), 0);
  struct sigaction ignore {};
  struct sigaction old_pipe {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &old_pipe), 0);
  std::atomic<bool> stop{false};
  RunContext ctx(JobId{}, "exec-3", 1, Instant(), StopToken(&stop));
  // SIGHUP, SIGINT, SIGQUIT, SIGPIPE and SIGTERM are bits 0, 1, 2, 12 and 14.
  Status s = RunExecTarget(ctx, R"({"argv":["sh","-c","for k in SigBlk SigIgn; do )"
                                R"(v=$(grep ^$k: /proc/self/status | cut -f2); )"
                                R"([ $((0x$v & 0x5007)) -eq 0 ] || exit 1; done"]})");
  sigaction(SIGPIPE, &old_pipe, nullptr);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  EXPECT_TRUE(s.ok()) << "a signal blocked or ignored in the command: " << s.ToString();
}

// A command gets no descriptor of the daemon's but its standard three: a
// socket left open in a command that outlives the daemon held its port.
TEST(TargetsTest, Targets_5_2_ExecInheritsNoOtherDescriptor) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);  // not close-on-exec, as Asio's sockets are not
  std::atomic<bool> stop{false};
  RunContext ctx(JobId{}, "exec-4", 1, Instant(), StopToken(&stop));
  Status s = RunExecTarget(
      ctx, R"({"argv":["sh","-c","[ ! -e /proc/self/fd/)" + std::to_string(p[1]) + R"( ]"]})");
  ::close(p[0]);
  ::close(p[1]);
  EXPECT_TRUE(s.ok()) << "the command inherited a descriptor: " << s.ToString();
}

TEST(TargetsTest, Targets_5_2_ExecExitStatusAndStop) {
  std::atomic<bool> stop{false};
  RunContext ctx(JobId{}, "exec-2", 1, Instant(), StopToken(&stop));
  EXPECT_TRUE(RunExecTarget(ctx, R"({"argv":["true"]})").ok());
  Status s = RunExecTarget(ctx, R"({"argv":["sh","-c","exit 7"]})");
  EXPECT_NE(s.message().find("exit status 7"), std::string::npos) << s.ToString();
  stop = true;
  s = RunExecTarget(ctx, R"({"argv":["sleep","600"]})");
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
}

}  // namespace
}  // namespace ax::server
