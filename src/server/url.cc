// The parts of an http:// URL.
#include "server/url.h"

#include <cctype>

#include <arpa/inet.h>

namespace ax::server {

std::optional<uint16_t> ParsePort(std::string_view digits) {
  if (digits.empty() || digits.size() > 5 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  const int n = std::stoi(std::string(digits));
  if (n > 65535) return std::nullopt;
  return static_cast<uint16_t>(n);
}

Status SplitAuthority(std::string_view authority, std::string& host, std::string& port) {
  std::string_view h = authority;
  std::string_view p;
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    if (close == std::string_view::npos)
      return Status::InvalidArgument("no ']' after the IPv6 address");
    std::string_view rest = h.substr(close + 1);
    h = h.substr(1, close - 1);
    in6_addr a{};
    if (inet_pton(AF_INET6, std::string(h).c_str(), &a) != 1) {
      return Status::InvalidArgument("\"" + std::string(h) + "\" is not an IPv6 address");
    }
    if (!rest.empty() && rest.front() != ':') {
      return Status::InvalidArgument("expected ':' and a port after the IPv6 address");
    }
    p = rest.empty() ? "80" : rest.substr(1);
  } else {
    size_t colon = h.rfind(':');
    p = colon == std::string_view::npos ? "80" : h.substr(colon + 1);
    h = h.substr(0, colon);
    if (h.empty()) return Status::InvalidArgument("no host");
    for (char c : h) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '-' && c != '_' &&
          c != '~') {
        return Status::InvalidArgument("the host \"" + std::string(h) +
                                       "\" has a character a host name cannot have");
      }
    }
  }
  if (std::optional<uint16_t> n = ParsePort(p); !n || *n == 0) {
    return Status::InvalidArgument("bad port \"" + std::string(p) + "\"");
  }
  host = std::string(h);
  port = std::string(p);
  return Status();
}

Status ParseServerUrl(std::string_view url, std::string& host, std::string& port,
                      std::string& base_path) {
  if (url.rfind("http://", 0) != 0) {
    return Status::InvalidArgument("server: must start with http:// (got \"" + std::string(url) +
                                   "\")");
  }
  std::string_view rest = url.substr(7);
  size_t slash = rest.find('/');
  base_path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!base_path.empty() && base_path.back() == '/') base_path.pop_back();
  Status s = SplitAuthority(rest.substr(0, slash), host, port);
  if (!s.ok()) {
    return Status::InvalidArgument("server: " + s.message() + " in \"" + std::string(url) + "\"");
  }
  return Status();
}

}  // namespace ax::server
