// HttpDo: blocking sockets owned by the calling thread, Beast's parser for
// the response.
//
// A webhook is one exchange on a kept-alive connection, so the client does
// the least the kernel allows: one send() and, for a response that arrives
// in one segment, one recv() that sleeps until it does (SO_RCVTIMEO bounds
// it). An io_context per thread cost an epoll_wait per wake-up and two
// timerfd updates per request on top. A request that may be stopped waits in
// slices of at most 100 ms, and looks at its stop token between them.
#include "server/http_client.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace ax::server {
namespace {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

struct Conn {
  Conn() = default;
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  ~Conn() {
    if (fd >= 0) ::close(fd);
  }
  int fd = -1;
  Duration rcv_timeout{0};  // SO_RCVTIMEO / SO_SNDTIMEO as last set
};

// A name's addresses are used for new connections for this long, then
// looked up again; a connection that fails drops them at once. (glibc keeps
// no cache of its own, so without this bound a daemon would call a host
// that moved at its old address until restarted.)
constexpr auto kResolvedFor = std::chrono::seconds(30);

struct Resolved {
  AddrList addrs;
  Clock::time_point at;
};

std::atomic<Resolver> resolver{&::getaddrinfo};

struct ThreadPool {
  std::map<std::string, Resolved> resolved;
  std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle;
  std::string buf;  // request bytes, reused
};

ThreadPool& Pool() {
  thread_local ThreadPool pool;
  return pool;
}

constexpr size_t kMaxIdlePerHost = 4;

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

Duration Remaining(Clock::time_point deadline) {
  return std::chrono::duration_cast<Duration>(deadline - Clock::now());
}

// How long one request may take, and its stop.
struct Limit {
  Clock::time_point deadline;
  StopToken stop;
  // The next wait: what is left, or a slice of it if the request may be
  // stopped (a fixed slice, so that pooled connections keep their timeouts).
  Duration Wait() const {
    const Duration left = Remaining(deadline);
    return stop.can_stop() ? std::min<Duration>(left, std::chrono::milliseconds(100)) : left;
  }
};

// Sets both socket timeouts to `t` (at least 1 ms) unless they are set to
// within 1% (at least 1 ms) of it already: the requests of one target share
// a timeout, so a pooled connection needs no system call for it.
bool SetTimeouts(Conn& c, Duration t) {
  t = std::max<Duration>(t, std::chrono::milliseconds(1));
  Duration slack = std::max<Duration>(t / 100, std::chrono::milliseconds(1));
  if (c.rcv_timeout > Duration(0) && c.rcv_timeout <= t + slack && c.rcv_timeout >= t - slack) {
    return true;
  }
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t).count();
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(us / 1000000);
  tv.tv_usec = static_cast<suseconds_t>(us % 1000000);
  if (setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) return false;
  if (setsockopt(c.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) return false;
  c.rcv_timeout = t;
  return true;
}

// Connects to the first address that answers within `limit`.
Status Connect(Conn& c, const addrinfo* addrs, const std::string& key, const Limit& limit) {
  std::string last = "no address";
  for (const addrinfo* a = addrs; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      do {
        if (limit.stop.stop_requested()) {
          ::close(fd);
          return Status::Cancelled("http " + key + ": stopped");
        }
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(limit.Wait()).count();
        rc = ::poll(&p, 1, static_cast<int>(std::clamp<int64_t>(ms, 0, INT32_MAX)));
      } while ((rc == 0 && Remaining(limit.deadline) > Duration(0)) || (rc < 0 && errno == EINTR));
      if (rc == 0) {
        ::close(fd);
        return Status::DeadlineExceeded("http " + key + ": no response within the timeout");
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      last = strerror(errno);
      ::close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    c.fd = fd;
    return Status();
  }
  return Status::Unavailable("http " + key + ": " + last);
}

// The request's bytes: `set` semantics for headers (a later header replaces
// an earlier one of the same name), Host and User-Agent first, the length
// computed from the body.
void Serialize(const ClientRequest& r, std::string& out) {
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  auto set = [&](std::string_view k, std::string_view v) {
    for (auto& f : fields) {
      if (SameName(f.first, k)) {
        f.second = v;
        return;
      }
    }
    fields.emplace_back(k, v);
  };
  // RFC 9110 7.2: the port unless it is the default, an IPv6 address in
  // brackets.
  std::string host = r.host.find(':') == std::string::npos ? r.host : "[" + r.host + "]";
  if (r.port != "80") host.append(":").append(r.port);
  set("Host", host);
  set("User-Agent", "ax");
  for (const auto& [k, v] : r.headers) {
    if (SameName(k, "Content-Length") || SameName(k, "Transfer-Encoding")) continue;
    set(k, v);
  }
  out.clear();
  out.append(r.method)
      .append(" ")
      .append(r.target.empty() ? "/" : r.target)
      .append(" HTTP/1.1\r\n");
  for (const auto& [k, v] : fields) out.append(k).append(": ").append(v).append("\r\n");
  // Like Beast's prepare_payload: a length for any body, and an explicit
  // zero for the methods that normally carry one.
  if (!r.body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "OPTIONS" ||
      r.method == "PATCH") {
    out.append("Content-Length: ").append(std::to_string(r.body.size())).append("\r\n");
  }
  out.append("\r\n").append(r.body);
}

enum class Outcome { kOk, kStale, kTimeout, kStopped, kError };

// After a wait that ended without data: whether to wait again (kOk, the
// timeouts set for it) or why not.
Outcome WaitAgain(Conn& c, const Limit& limit, std::string& error) {
  if (limit.stop.stop_requested()) return Outcome::kStopped;
  if (Remaining(limit.deadline) <= Duration(0)) return Outcome::kTimeout;
  if (!SetTimeouts(c, limit.Wait())) {
    error = strerror(errno);
    return Outcome::kError;
  }
  return Outcome::kOk;
}

// Sends all of `out` on a connected `c`. kStale: the peer had closed the
// connection (a pooled connection gone idle).
Outcome SendAll(Conn& c, const std::string& out, const Limit& limit, std::string& error) {
  if (!SetTimeouts(c, limit.Wait())) {
    error = strerror(errno);
    return Outcome::kError;
  }
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = ::send(c.fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (Outcome o = WaitAgain(c, limit, error); o != Outcome::kOk) return o;
        continue;
      }
      error = strerror(errno);
      return errno == EPIPE || errno == ECONNRESET ? Outcome::kStale : Outcome::kError;
    }
    sent += static_cast<size_t>(n);
    if (sent < out.size()) {
      if (Outcome o = WaitAgain(c, limit, error); o != Outcome::kOk) return o;
    }
  }
  return Outcome::kOk;
}

// Reads the response to what was sent on `c` into `parser`. kStale: the peer
// had closed the connection before answering a byte.
Outcome ReadResponse(Conn& c, bool head, const Limit& limit,
                     std::optional<http::response_parser<http::string_body>>& parser,
                     std::string& error, bool* reusable) {
  auto fresh_parser = [&] {
    parser.emplace();
    parser->eager(true);
    if (head) parser->skip(true);
  };
  fresh_parser();
  char buf[16384];
  size_t have = 0;  // unparsed bytes at the front of buf
  bool got_bytes = false;
  for (;;) {
    ssize_t n = ::recv(c.fd, buf + have, sizeof(buf) - have, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (Outcome o = WaitAgain(c, limit, error); o != Outcome::kOk) return o;
        continue;
      }
      error = strerror(errno);
      return !got_bytes && errno == ECONNRESET ? Outcome::kStale : Outcome::kError;
    }
    boost::beast::error_code ec;
    if (n == 0) {
      if (!got_bytes) {
        error = "connection closed";
        return Outcome::kStale;
      }
      parser->put_eof(ec);
      if (ec) {
        error = ec.message();
        return Outcome::kError;
      }
      *reusable = false;
      return Outcome::kOk;
    }
    got_bytes = true;
    have += static_cast<size_t>(n);
    size_t used = 0;
    for (;;) {
      while (used < have && !parser->is_done()) {
        size_t k = parser->put(boost::asio::buffer(buf + used, have - used), ec);
        if (ec == http::error::need_more) {
          ec = {};
          break;
        }
        if (ec) {
          error = ec.message();
          return Outcome::kError;
        }
        if (k == 0) break;
        used += k;
      }
      // An interim response (100 Continue, 103 Early Hints) comes before the
      // final one, asked for or not (RFC 9110 15.2). 101 ends HTTP here.
      const unsigned status = parser->is_done() ? parser->get().result_int() : 0;
      if (status < 100 || status > 199 || status == 101) break;
      fresh_parser();
    }
    if (parser->is_done()) {
      // Bytes after the response: not a connection to reuse.
      *reusable = used == have && parser->get().keep_alive();
      return Outcome::kOk;
    }
    std::memmove(buf, buf + used, have - used);
    have -= used;
    if (have == sizeof(buf)) {
      error = "response header too large";
      return Outcome::kError;
    }
    if (Outcome o = WaitAgain(c, limit, error); o != Outcome::kOk) return o;
  }
}

}  // namespace

Result<ClientResponse> HttpDo(const ClientRequest& r, Duration timeout, StopToken stop) {
  const Limit limit{Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout), stop};
  ThreadPool& p = Pool();
  std::string key = r.host + ":" + r.port;
  Serialize(r, p.buf);
  bool head = r.method == "HEAD";

  for (int round = 0; round < 2; ++round) {
    std::unique_ptr<Conn> c;
    auto& idle = p.idle[key];
    bool reused = false;
    if (!idle.empty() && round == 0) {
      c = std::move(idle.back());
      idle.pop_back();
      reused = true;
    } else {
      c = std::make_unique<Conn>();
      auto rit = p.resolved.find(key);
      if (rit == p.resolved.end() || Clock::now() - rit->second.at > kResolvedFor) {
        addrinfo hints{};
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        int rc = resolver.load()(r.host.c_str(), r.port.c_str(), &hints, &res);
        if (rc != 0) return Status::Unavailable("resolve " + key + ": " + gai_strerror(rc));
        rit = p.resolved.insert_or_assign(key, Resolved{AddrList(res), Clock::now()}).first;
      }
      if (Status s = Connect(*c, rit->second.addrs.get(), key, limit); !s.ok()) {
        p.resolved.erase(rit);
        return s;
      }
    }
    std::optional<http::response_parser<http::string_body>> parser;
    std::string error;
    bool reusable = false;
    Outcome outcome = SendAll(*c, p.buf, limit, error);
    if (outcome == Outcome::kOk) outcome = ReadResponse(*c, head, limit, parser, error, &reusable);
    switch (outcome) {
      case Outcome::kOk:
        break;
      case Outcome::kStale:
        if (reused) continue;  // the pooled connection was closed: once more, anew
        return Status::Unavailable("http " + key + ": " += error);
      case Outcome::kTimeout:
        return Status::DeadlineExceeded("http " + key + ": no response within the timeout");
      case Outcome::kStopped:
        return Status::Cancelled("http " + key + ": stopped");
      case Outcome::kError:
        return Status::Unavailable("http " + key + ": " += error);
    }
    auto& res = parser->get();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    const auto content_type = res[http::field::content_type];
    out.content_type.assign(content_type.data(), content_type.size());
    out.body = std::move(res.body());
    if (reusable && idle.size() < kMaxIdlePerHost) idle.push_back(std::move(c));
    return out;
  }
  return Status::Unavailable("http " + key + ": connection closed");
}

void SetResolverForTest(Resolver r) { resolver.store(r != nullptr ? r : &::getaddrinfo); }

}  // namespace ax::server
