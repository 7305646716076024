// A webhook receiver for tests and benchmarks: records every request's
// Ax-Job-Id, Ax-Attempt and Ax-Scheduled-At (one line each, tab-separated,
// plus the receive time in ns) and answers 200.
//   ax_test_receiver --port-file F --out FILE [--port P] [--threads N] [--fail-every K]
// Lines are flushed every 50 ms and on SIGTERM/SIGINT.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <signal.h>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

std::mutex g_mu;
std::string g_buf;
std::atomic<uint64_t> g_count{0};
int g_fail_every = 0;

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket s) : stream_(std::move(s)) {}
  void Read() {
    req_ = {};
    http::async_read(stream_, buf_, req_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return;
                       self->Handle();
                     });
  }

 private:
  void Handle() {
    uint64_t n = g_count.fetch_add(1) + 1;
    auto now = std::chrono::system_clock::now().time_since_epoch();
    std::string line =
        std::string(req_["Ax-Job-Id"]) + "\t" + std::string(req_["Ax-Attempt"]) + "\t" +
        std::string(req_["Ax-Scheduled-At"]) + "\t" +
        std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) + "\n";
    {
      std::lock_guard lock(g_mu);
      g_buf += line;
    }
    bool fail = g_fail_every > 0 && n % static_cast<uint64_t>(g_fail_every) == 0;
    res_ = {};
    res_.version(req_.version());
    res_.result(fail ? http::status::internal_server_error : http::status::ok);
    res_.keep_alive(req_.keep_alive());
    res_.body() = "ok";
    res_.prepare_payload();
    http::async_write(stream_, res_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (ec || !self->res_.keep_alive()) return;
      self->Read();
    });
  }
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;
};

void Accept(tcp::acceptor& a, net::io_context& ioc) {
  a.async_accept(net::make_strand(ioc), [&a, &ioc](beast::error_code ec, tcp::socket s) {
    if (!ec) {
      s.set_option(tcp::no_delay(true));
      std::make_shared<Session>(std::move(s))->Read();
    }
    if (a.is_open()) Accept(a, ioc);
  });
}

}  // namespace

int main(int argc, char** argv) {
  std::string port_file, out = "/dev/null";
  int port = 0, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--port-file") port_file = argv[i + 1];
    if (k == "--out") out = argv[i + 1];
    if (k == "--port") port = std::atoi(argv[i + 1]);
    if (k == "--threads") threads = std::atoi(argv[i + 1]);
    if (k == "--fail-every") g_fail_every = std::atoi(argv[i + 1]);
  }
  FILE* f = std::fopen(out.c_str(), "a");
  if (f == nullptr) return 1;
  net::io_context ioc(threads);
  tcp::acceptor a(ioc,
                  tcp::endpoint(net::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)));
  Accept(a, ioc);
  if (!port_file.empty()) {
    std::ofstream pf(port_file + ".tmp");
    pf << a.local_endpoint().port() << "\n";
    pf.close();
    std::rename((port_file + ".tmp").c_str(), port_file.c_str());
  }
  std::atomic<bool> stop{false};
  auto flush = [&] {
    std::string b;
    {
      std::lock_guard lock(g_mu);
      b.swap(g_buf);
    }
    if (!b.empty()) {
      std::fwrite(b.data(), 1, b.size(), f);
      std::fflush(f);
    }
  };
  std::thread flusher([&] {
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      flush();
    }
  });
  net::signal_set sigs(ioc, SIGTERM, SIGINT);
  sigs.async_wait([&](beast::error_code, int) { ioc.stop(); });
  std::vector<std::thread> ts;
  for (int i = 0; i < threads; ++i) ts.emplace_back([&] { ioc.run(); });
  for (auto& t : ts) t.join();
  stop = true;
  flusher.join();
  flush();
  std::fclose(f);
  std::fprintf(stderr, "receiver: %llu requests\n",
               static_cast<unsigned long long>(g_count.load()));
  return 0;
}
