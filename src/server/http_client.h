// A small HTTP/1.1 client for webhooks and the CLI: keep-alive connections
// pooled per thread and per host (a worker reuses its own connections, so
// the pool needs no lock), with one deadline per request.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ax/run_context.h"
#include "ax/status.h"
#include "ax/time.h"

struct addrinfo;

namespace ax::server {

struct ClientRequest {
  std::string method = "GET";
  std::string host;
  std::string port = "80";
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

struct ClientResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

// Sends `req` and reads the response within `timeout`. Unavailable on
// connection errors, DeadlineExceeded on timeout, Cancelled within about
// 100 ms of `stop` turning true (the connection is dropped). A pooled connection that
// turns out closed is replaced once, transparently. A host's addresses are
// looked up again after 30 s, or after a connection to them failed.
// Thread-safe.
Result<ClientResponse> HttpDo(const ClientRequest& req, Duration timeout, StopToken stop = {});

// How HttpDo looks names up: getaddrinfo, or what a test puts in its place
// (nullptr puts getaddrinfo back). The result is freed with freeaddrinfo.
using Resolver = int (*)(const char* host, const char* port, const addrinfo* hints, addrinfo** res);
void SetResolverForTest(Resolver r);

}  // namespace ax::server
