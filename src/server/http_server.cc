// Beast sessions: read a request, hand it to the Api, write the answer (when
// the Api calls back, possibly from another thread: posted to the session's
// strand), and read the next one on the same connection.
#include "server/http_server.h"

#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <pthread.h>

#include "server/log.h"
#include "server/url.h"

namespace ax::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string ToString(beast::string_view v) { return {v.data(), v.size()}; }

// A request the parser refused (its line, a header, its length or a chunk):
// answered 400 and the connection closed, as its framing is lost.
bool Malformed(beast::error_code ec) {
  if (ec.category() != make_error_code(http::error::bad_method).category()) return false;
  switch (static_cast<http::error>(ec.value())) {
    case http::error::bad_line_ending:
    case http::error::bad_method:
    case http::error::bad_target:
    case http::error::bad_version:
    case http::error::bad_field:
    case http::error::bad_value:
    case http::error::bad_content_length:
    case http::error::bad_transfer_encoding:
    case http::error::bad_chunk:
    case http::error::bad_chunk_extension:
    case http::error::bad_obs_fold:
      return true;
    default:
      return false;
  }
}

// True when a Transfer-Encoding header is absent or names chunked alone.
bool OnlyChunked(beast::string_view te) {
  for (const auto& coding : http::token_list(te)) {
    if (!beast::iequals(coding, "chunked")) return false;
  }
  return true;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Api& api, size_t body_limit)
      : stream_(std::move(socket)), api_(api), body_limit_(body_limit) {}

  void Run() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(body_limit_);
    stream_.expires_after(std::chrono::seconds(120));  // idle keep-alive limit
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  // A client that asks to be told before it sends its body (curl does over
  // 1 MB) gets 100 Continue; otherwise it would wait a second for it.
  void OnHeader(beast::error_code ec, size_t n) {
    if (ec) return OnRead(ec, n);
    if (!OnlyChunked(parser_->get()[http::field::transfer_encoding])) {
      // A coding we cannot undo (gzip, say): the body would be read as
      // JSON still encoded. RFC 9112 6.1 asks for 501; the framing is lost.
      api_.CountResponse(501);
      return Write(
          Api::Error(501, "NotImplemented", "transfer-encoding: only chunked is supported"), false,
          11);
    }
    if (!beast::iequals(parser_->get()[http::field::expect], "100-continue")) return ReadBody();
    auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_,
                                                                  parser_->get().version());
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code e, size_t) {
      if (e) return self->OnRead(e, 0);
      self->ReadBody();
    });
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == http::error::body_limit) {
      ApiResponse r = Api::Error(413, "PayloadTooLarge",
                                 "body: larger than " + std::to_string(body_limit_) + " bytes");
      api_.CountResponse(413);
      return Write(std::move(r), false, 11);
    }
    if (ec == http::error::header_limit) {
      api_.CountResponse(431);
      return Write(Api::Error(431, "HeadersTooLarge", "headers: too large"), false, 11);
    }
    if (Malformed(ec)) {
      api_.CountResponse(400);
      return Write(Api::Error(400, "InvalidArgument", "request: " + ec.message()), false, 11);
    }
    if (ec == http::error::end_of_stream || ec) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      return;
    }
    http::request<http::string_body> req = parser_->release();
    ApiRequest ar;
    ar.method = ToString(req.method_string());
    ar.target = ToString(req.target());
    ar.authorization = ToString(req[http::field::authorization]);
    ar.body = std::move(req.body());
    bool keep_alive = req.keep_alive();
    unsigned version = req.version();
    bool head = req.method() == http::verb::head;
    auto self = shared_from_this();
    api_.Handle(ar, [self, keep_alive, version, head](ApiResponse r) {
      net::post(self->stream_.get_executor(),
                [self, r = std::move(r), keep_alive, version, head]() mutable {
                  self->Write(std::move(r), keep_alive, version, head);
                });
    });
  }

  // A HEAD response (`head`) has the headers GET's would, Content-Length
  // included (RFC 9110 8.6), and no body.
  void Write(ApiResponse r, bool keep_alive, unsigned version, bool head = false) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(r.status), version);
    res->set(http::field::server, "ax");
    res->set(http::field::content_type, r.content_type);
    if (r.status == 401) res->set(http::field::www_authenticate, "Bearer");
    if (!r.allow.empty()) res->set(http::field::allow, r.allow);
    res->body() = std::move(r.body);
    res->keep_alive(keep_alive);
    res->prepare_payload();
    if (head) res->body().clear();
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res, keep_alive](beast::error_code ec, size_t) {
                        if (ec || !keep_alive) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->DoRead();
                      });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  Api& api_;
  size_t body_limit_;
};

}  // namespace

struct HttpServer::Impl {
  Impl(Api& a, HttpServerOptions o)
      : api(a),
        options(std::move(o)),
        ioc(std::max(1, options.threads)),
        acceptor(net::make_strand(ioc)),
        retry(acceptor.get_executor()) {}
  Api& api;
  HttpServerOptions options;
  net::io_context ioc;
  tcp::acceptor acceptor;  // on a strand: its handlers and the retry timer
                           // never run at once
  net::steady_timer retry;
  std::vector<std::thread> threads;
  uint16_t port = 0;

  bool accept_failing = false;  // logged once a spell

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket s) {
      if (ec == net::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {
        // Out of descriptors (EMFILE), say: the connection stays queued and
        // an accept at once would fail at once, a core spinning for nothing.
        if (!accept_failing) {
          spdlog::warn("event=accept_failed error={} note={}", Q(ec.message()),
                       Q("accepting again every 100 ms until it works"));
        }
        accept_failing = true;
        retry.expires_after(std::chrono::milliseconds(100));
        retry.async_wait([this](beast::error_code e) {
          if (!e) Accept();
        });
        return;
      }
      if (accept_failing) spdlog::info("event=accept_recovered");
      accept_failing = false;
      s.set_option(tcp::no_delay(true), ec);  // not a reason to drop it
      std::make_shared<Session>(std::move(s), api, options.body_limit)->Run();
      Accept();
    });
  }
};

HttpServer::HttpServer(Api& api, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(api, std::move(options))) {}
HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  beast::error_code ec;
  auto addr = net::ip::make_address(impl_->options.host, ec);
  if (ec) {
    tcp::resolver resolver(impl_->ioc);
    auto eps = resolver.resolve(impl_->options.host, "", ec);
    if (ec || eps.empty())
      return Status::InvalidArgument("listen: cannot resolve " + impl_->options.host);
    addr = eps.begin()->endpoint().address();
  }
  tcp::endpoint ep(addr, impl_->options.port);
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::Unavailable("listen " + impl_->options.host + ":" +
                               std::to_string(impl_->options.port) + ": " + ec.message());
  }
  impl_->port = a.local_endpoint().port();
  impl_->Accept();
  for (int i = 0; i < std::max(1, impl_->options.threads); ++i) {
    impl_->threads.emplace_back([this] {
      pthread_setname_np(pthread_self(), "ax-http");
      impl_->ioc.run();
    });
  }
  return Status();
}

uint16_t HttpServer::port() const { return impl_->port; }

void HttpServer::Stop() {
  if (impl_->threads.empty()) return;
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

Status SplitHostPort(std::string_view s, std::string_view field, std::string& host,
                     uint16_t& port) {
  std::string f(field);
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return Status::InvalidArgument(f + ": expected HOST:PORT");
  std::string_view h = s.substr(0, colon);
  std::string_view p = s.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (h.empty()) return Status::InvalidArgument(f + ": no host in \"" + std::string(s) + "\"");
  std::optional<uint16_t> n = ParsePort(p);
  if (!n) return Status::InvalidArgument(f + ": bad port in \"" + std::string(s) + "\"");
  host = std::string(h);
  port = *n;
  return Status();
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  beast::error_code ec;
  auto a = net::ip::make_address(std::string(host), ec);
  return !ec && a.is_loopback();
}

}  // namespace ax::server
