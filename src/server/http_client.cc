// HttpDo: Beast over a thread-local io_context, run on the calling thread.
#include "server/http_client.h"

#include <map>
#include <memory>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace ax::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct Conn {
  explicit Conn(net::io_context& ctx) : stream(ctx) {}
  beast::tcp_stream stream;
  beast::flat_buffer buffer;
};

struct ThreadPool {
  net::io_context ctx;
  std::map<std::string, tcp::resolver::results_type> resolved;
  std::map<std::string, std::vector<std::unique_ptr<Conn>>> idle;
};

ThreadPool& Pool() {
  thread_local ThreadPool pool;
  return pool;
}

constexpr size_t kMaxIdlePerHost = 4;

// One exchange on `c` (connecting first when `connect` is set).
beast::error_code Exchange(ThreadPool& p, Conn& c, bool connect,
                           const tcp::resolver::results_type& eps,
                           http::request<http::string_body>& req,
                           http::response<http::string_body>& res, Duration timeout,
                           bool* got_bytes) {
  beast::error_code result;
  c.stream.expires_after(std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  auto on_read = [&](beast::error_code ec, size_t n) {
    if (n > 0) *got_bytes = true;
    result = ec;
  };
  auto on_write = [&](beast::error_code ec, size_t) {
    if (ec) {
      result = ec;
      return;
    }
    http::async_read(c.stream, c.buffer, res, on_read);
  };
  auto start_write = [&] { http::async_write(c.stream, req, on_write); };
  if (connect) {
    c.stream.async_connect(eps, [&](beast::error_code ec, const tcp::endpoint&) {
      if (ec) {
        result = ec;
        return;
      }
      c.stream.socket().set_option(tcp::no_delay(true));
      start_write();
    });
  } else {
    start_write();
  }
  p.ctx.restart();
  p.ctx.run();
  return result;
}

}  // namespace

Result<ClientResponse> HttpDo(const ClientRequest& r, Duration timeout) {
  ThreadPool& p = Pool();
  std::string key = r.host + ":" + r.port;
  auto rit = p.resolved.find(key);
  if (rit == p.resolved.end()) {
    tcp::resolver resolver(p.ctx);
    beast::error_code ec;
    auto eps = resolver.resolve(r.host, r.port, ec);
    if (ec) return Status::Unavailable("resolve " + key + ": " + ec.message());
    rit = p.resolved.emplace(key, eps).first;
  }
  http::request<http::string_body> req{http::string_to_verb(r.method), r.target, 11};
  if (req.method() == http::verb::unknown) req.method_string(r.method);
  req.set(http::field::host, r.host);
  req.set(http::field::user_agent, "ax");
  for (const auto& [k, v] : r.headers) req.set(k, v);
  req.body() = r.body;
  req.prepare_payload();
  req.keep_alive(true);

  for (int round = 0; round < 2; ++round) {
    std::unique_ptr<Conn> c;
    auto& idle = p.idle[key];
    bool reused = false;
    if (!idle.empty() && round == 0) {
      c = std::move(idle.back());
      idle.pop_back();
      reused = true;
    } else {
      c = std::make_unique<Conn>(p.ctx);
    }
    http::response<http::string_body> res;
    bool got_bytes = false;
    beast::error_code ec = Exchange(p, *c, !reused, rit->second, req, res, timeout, &got_bytes);
    if (ec) {
      if (reused && !got_bytes && ec != beast::error::timeout) continue;  // stale connection
      if (ec == beast::error::timeout) {
        return Status::DeadlineExceeded("http " + key + ": no response within the timeout");
      }
      return Status::Unavailable("http " + key + ": " + ec.message());
    }
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    out.content_type = std::string(res[http::field::content_type]);
    out.body = std::move(res.body());
    if (res.keep_alive() && idle.size() < kMaxIdlePerHost) {
      c->stream.expires_never();
      idle.push_back(std::move(c));
    }
    return out;
  }
  return Status::Unavailable("http " + key + ": connection closed");
}

Status ParseServerUrl(std::string_view url, std::string& host, std::string& port,
                      std::string& base_path) {
  if (url.rfind("http://", 0) != 0) {
    return Status::InvalidArgument("server: must start with http:// (got \"" + std::string(url) +
                                   "\")");
  }
  std::string_view rest = url.substr(7);
  size_t slash = rest.find('/');
  std::string_view hp = rest.substr(0, slash);
  base_path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
  size_t colon = hp.rfind(':');
  if (colon == std::string_view::npos) {
    host = std::string(hp);
    port = "80";
  } else {
    host = std::string(hp.substr(0, colon));
    port = std::string(hp.substr(colon + 1));
  }
  if (host.empty())
    return Status::InvalidArgument("server: no host in \"" + std::string(url) + "\"");
  return Status();
}

}  // namespace ax::server
