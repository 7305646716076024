// The HTTP/1.1 transport of `ax serve`: Boost.Beast, asynchronous, keep-alive,
// on a few I/O threads. Requests go to an Api; bodies above `body_limit` get
// 413 and the connection is closed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ax/status.h"

#include "server/api.h"

namespace ax::server {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;  // 0: any free port
  int threads = 2;
  size_t body_limit = 1 << 20;
};

class HttpServer {
 public:
  HttpServer(Api& api, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds, listens and starts the I/O threads. Unavailable when the address
  // cannot be bound.
  Status Start();
  // The bound port (after Start).
  uint16_t port() const;
  // Closes everything and joins the I/O threads.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Splits "HOST:PORT" ("[::1]:7070" for IPv6); InvalidArgument naming `field`.
Status SplitHostPort(std::string_view s, std::string_view field, std::string& host, uint16_t& port);
// True for loopback hosts (127.0.0.0/8, ::1, localhost).
bool IsLoopbackHost(std::string_view host);

}  // namespace ax::server
