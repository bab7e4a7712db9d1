// The listeners' security (src/greensched/serve/listener_security.hpp, token_file.hpp): which
// addresses are loopback, the exposure rule, bearer tokens (parsing, constant-time compare,
// rotation through the file) and serve's extender over TLS with client certificates and a
// token, against certificates made at test time by openssl (tls_test_support.hpp). The
// dispatch service's are in dispatch_test.cpp.
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "greensched/serve/listener_security.hpp"
#include "greensched/serve/token_file.hpp"
#include "scratch_dir.hpp"
#include "serve_test_support.hpp"
#include "tls_test_support.hpp"

namespace greensched::serve {
namespace {

using greensched::testing::bearer;
using greensched::testing::https_client;
using greensched::testing::ScratchDir;
using greensched::testing::TlsFiles;
using nlohmann::json;

TEST(ListenerSecurity, LoopbackAddresses) {
  for (const char* host : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LocalHost",
                           "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(is_loopback_host(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "::", "[::]", "10.0.0.7", "128.0.0.1", "", "myhost",
                           "localhost.example.com", "::ffff:10.0.0.1", "127.0.0.1.nip.io"}) {
    EXPECT_FALSE(is_loopback_host(host)) << host;
  }
}

TEST(ListenerSecurity, ExposureRule) {
  ListenerSecurity none;
  EXPECT_TRUE(check_exposure("127.0.0.1", none).ok());
  EXPECT_EQ(check_exposure("127.0.0.1", none).value(), "");
  auto refused = check_exposure("0.0.0.0", none);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("no TLS (--tls-cert FILE --tls-key FILE) and no authentication"),
            std::string::npos)
      << refused.error();
  EXPECT_NE(refused.error().find("--insecure"), std::string::npos) << refused.error();

  ListenerSecurity tls_only;
  tls_only.tls_cert = "c.pem";
  tls_only.tls_key = "k.pem";
  auto no_auth = check_exposure("10.0.0.7", tls_only);
  ASSERT_FALSE(no_auth.ok());
  EXPECT_EQ(no_auth.error().find("no TLS"), std::string::npos) << no_auth.error();
  EXPECT_NE(no_auth.error().find("no authentication"), std::string::npos) << no_auth.error();

  ListenerSecurity token_only;
  token_only.token_file = "t";
  auto no_tls = check_exposure("0.0.0.0", token_only);
  ASSERT_FALSE(no_tls.ok());
  EXPECT_NE(no_tls.error().find("no TLS"), std::string::npos);
  EXPECT_EQ(no_tls.error().find("no authentication"), std::string::npos) << no_tls.error();

  ListenerSecurity secured = tls_only;
  secured.token_file = "t";
  ASSERT_TRUE(check_exposure("0.0.0.0", secured).ok());
  EXPECT_EQ(check_exposure("0.0.0.0", secured).value(), "");
  ListenerSecurity mtls = tls_only;
  mtls.client_ca = "ca.pem";  // client certificates authenticate too (kube-scheduler's way)
  EXPECT_TRUE(check_exposure("0.0.0.0", mtls).ok());

  ListenerSecurity insecure;
  insecure.insecure = true;
  auto warned = check_exposure("0.0.0.0", insecure);
  ASSERT_TRUE(warned.ok());
  EXPECT_NE(warned.value().find("--insecure"), std::string::npos) << warned.value();
  EXPECT_EQ(check_exposure("127.0.0.1", insecure).value(), "");  // nothing to warn about
}

TEST(ListenerSecurity, OptionsGoTogether) {
  ScratchDir dir;
  ListenerSecurity s;
  s.tls_cert = dir.write("c.pem", "x");
  EXPECT_NE(check_listener_options(s).message().find("--tls-cert needs --tls-key"),
            std::string::npos);
  s = {};
  s.tls_key = dir.write("k.pem", "x");
  EXPECT_NE(check_listener_options(s).message().find("--tls-key needs --tls-cert"),
            std::string::npos);
  s = {};
  s.client_ca = dir.write("ca.pem", "x");
  EXPECT_NE(check_listener_options(s).message().find("--client-ca needs TLS"), std::string::npos);
  s = {};
  s.token_file = dir.file("absent");
  Status absent = check_listener_options(s);
  EXPECT_EQ(absent.code(), ErrorCode::kNotFound) << absent.message();
  s.token_file = dir.write("empty", " \n");
  Status empty = check_listener_options(s);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.message().find("holds no token"), std::string::npos) << empty.message();
  s.token_file = dir.write("token", "abc\n");
  EXPECT_TRUE(check_listener_options(s).ok());
}

TEST(ListenerSecurity, BearerTokensCompared) {
  EXPECT_EQ(bearer_token("Bearer abc").value_or("-"), "abc");
  EXPECT_EQ(bearer_token("bearer  abc ").value_or("-"), "abc");
  EXPECT_FALSE(bearer_token("Basic abc").has_value());
  EXPECT_FALSE(bearer_token("Bearer").has_value());
  EXPECT_FALSE(bearer_token("Bearer   ").has_value());
  EXPECT_FALSE(bearer_token("Bearerabc").has_value());
  EXPECT_FALSE(bearer_token("").has_value());
  EXPECT_TRUE(constant_time_equal("s3cret", "s3cret"));
  EXPECT_FALSE(constant_time_equal("s3cret", "s3cres"));
  EXPECT_FALSE(constant_time_equal("s3cret", "s3cret-longer"));
  EXPECT_FALSE(constant_time_equal("", "x"));
}

TEST(ListenerSecurity, TokenFileRotatesAndKeepsTheTokenWhileEmpty) {
  ScratchDir dir;
  const std::string path = dir.write("token", "first\n");
  auto file = TokenFile::open(path, std::chrono::milliseconds(0));
  ASSERT_TRUE(file.ok()) << file.error();
  TokenFile& token = *file.value();
  EXPECT_TRUE(token.matches("first"));
  EXPECT_FALSE(token.matches("first\n"));
  EXPECT_FALSE(token.matches("second"));
  dir.write("token.new", "second");  // as a Secret update: a new file renamed over the old
  std::filesystem::rename(dir.file("token.new"), path);
  EXPECT_TRUE(token.matches("second"));
  EXPECT_FALSE(token.matches("first"));
  dir.write("token", "");  // mid-rewrite
  EXPECT_TRUE(token.matches("second"));
  dir.write("token", "third  \n");
  EXPECT_TRUE(token.matches("third"));
  EXPECT_FALSE(token.matches("second"));
}

TEST(ListenerSecurity, TokenFileLookedAtOncePerSecond) {
  ScratchDir dir;
  const std::string path = dir.write("token", "first");
  auto file = TokenFile::open(path);  // the default: once per second
  ASSERT_TRUE(file.ok()) << file.error();
  dir.write("token", "second-token");
  EXPECT_TRUE(file.value()->matches("first"));  // not looked at again yet
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE(file.value()->matches("second-token"));
  EXPECT_FALSE(file.value()->matches("first"));
}

TEST(ListenerSecurity, BadTlsFilesAreNamed) {
  ScratchDir dir;
  TlsFiles tls;
  ASSERT_TRUE(make_tls_files(dir, tls));
  ListenerSecurity s;
  s.tls_cert = dir.write("junk.crt", "not a certificate");
  s.tls_key = tls.server_key;
  auto junk = make_listener(s);
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().find("--tls-cert " + s.tls_cert), std::string::npos) << junk.error();
  s.tls_cert = tls.server_cert;
  s.tls_key = tls.client_key;  // another certificate's key
  auto mismatch = make_listener(s);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.error().find("--tls-key " + tls.client_key +
                                  ": not the PEM private key (without a passphrase) of "
                                  "--tls-cert " +
                                  tls.server_cert),
            std::string::npos)
      << mismatch.error();
  s.tls_key = tls.server_key;
  EXPECT_TRUE(make_listener(s).ok());
}

// serve's extender over TLS, with client certificates and a token.
TEST(ListenerSecurity, ExtenderServesHttpsToClientsTheCaSigned) {
  ScratchDir dir;
  TlsFiles tls;
  ASSERT_TRUE(make_tls_files(dir, tls));
  ServerOptions options;
  options.security.tls_cert = tls.server_cert;
  options.security.tls_key = tls.server_key;
  options.security.client_ca = tls.ca_cert;
  testing::TestServer server("fgd", options);

  auto with_cert = https_client(server.port(), tls.ca_cert, tls.client_cert, tls.client_key);
  auto pods = with_cert->Get("/pods");
  ASSERT_TRUE(pods) << httplib::to_string(pods.error());
  EXPECT_EQ(pods->status, 200) << pods->body;
  auto filter = with_cert->Post("/filter", "{", "application/json");
  ASSERT_TRUE(filter);
  EXPECT_EQ(filter->status, 400);  // through the guard, to the verb

  auto without = https_client(server.port(), tls.ca_cert);
  auto refused = without->Get("/pods");
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  EXPECT_EQ(refused->status, 401);
  EXPECT_NE(json::parse(refused->body).value("Error", "").find("client certificate"),
            std::string::npos)
      << refused->body;
  auto refused_verb = without->Post("/filter", "{}", "application/json");
  ASSERT_TRUE(refused_verb);
  EXPECT_EQ(refused_verb->status, 401);
  auto metrics = without->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  auto health = without->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200) << health->body;

  // A certificate another CA signed ends the handshake.
  auto stranger = https_client(server.port(), tls.ca_cert, tls.stranger_cert, tls.stranger_key);
  EXPECT_FALSE(stranger->Get("/healthz"));
  // Plain HTTP to the TLS port gets no answer.
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(5, 0);
  EXPECT_FALSE(plain.Get("/healthz"));
  // A client that does not trust the CA refuses the server.
  auto untrusting = https_client(server.port(), tls.client_cert);  // not a CA
  EXPECT_FALSE(untrusting->Get("/healthz"));
}

TEST(ListenerSecurity, ExtenderTokenOverTls) {
  ScratchDir dir;
  TlsFiles tls;
  ASSERT_TRUE(make_tls_files(dir, tls));
  ServerOptions options;
  options.security.tls_cert = tls.server_cert;
  options.security.tls_key = tls.server_key;
  options.security.token_file = dir.write("token", "extender-token\n");
  testing::TestServer server("fgd", options);
  auto client = https_client(server.port(), tls.ca_cert);
  auto none = client->Get("/pods");
  ASSERT_TRUE(none) << httplib::to_string(none.error());
  EXPECT_EQ(none->status, 401);
  EXPECT_EQ(none->get_header_value("WWW-Authenticate"), "Bearer realm=\"greensched\"");
  EXPECT_NE(json::parse(none->body).value("Error", "").find("missing bearer token"),
            std::string::npos);
  auto wrong = client->Get("/pods", bearer("extender-tokem"));
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(json::parse(wrong->body).value("Error", ""), "wrong bearer token");
  auto right = client->Get("/pods", bearer("extender-token"));
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200) << right->body;
  auto health = client->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

// A refused request's body is never read, so the connection is closed after the 401: a client
// that kept it open would have its next request read from the middle of that body.
TEST(ListenerSecurity, KeepAliveClientServedAfterA401) {
  ScratchDir dir;
  ServerOptions options;
  options.security.token_file = dir.write("token", "t0ken");
  testing::TestServer server("fgd", options);
  httplib::Client client("127.0.0.1", server.port());
  client.set_keep_alive(true);
  client.set_read_timeout(10, 0);
  const std::string body(100000, ' ');
  for (int i = 0; i < 3; ++i) {
    auto refused = client.Post("/filter", body, "application/json");
    ASSERT_TRUE(refused) << httplib::to_string(refused.error());
    EXPECT_EQ(refused->status, 401);
    EXPECT_EQ(refused->get_header_value("Connection"), "close");
    auto served = client.Get("/pods", bearer("t0ken"));
    ASSERT_TRUE(served) << httplib::to_string(served.error());
    EXPECT_EQ(served->status, 200) << served->body;
  }
}

// httplib reads no body of a GET: left in the connection, it would be read as the next
// request (over TLS that one then got 400). Such a request is refused with the reason and the
// connection closed; the client's next request, on a new connection, is served.
TEST(ListenerSecurity, AGetWithABodyIsRefusedAndTheNextRequestServed) {
  ScratchDir dir;
  TlsFiles tls;
  ASSERT_TRUE(make_tls_files(dir, tls));
  ServerOptions options;
  options.security.tls_cert = tls.server_cert;
  options.security.tls_key = tls.server_key;
  testing::TestServer server("fgd", options);
  auto client = https_client(server.port(), tls.ca_cert);
  client->set_keep_alive(true);
  for (int i = 0; i < 3; ++i) {
    httplib::Request get;
    get.method = "GET";
    get.path = "/pods";
    get.body = R"({"ignored": true})";
    get.set_header("Content-Type", "application/json");
    auto refused = client->send(get);
    ASSERT_TRUE(refused) << httplib::to_string(refused.error());
    EXPECT_EQ(refused->status, 400);
    EXPECT_EQ(refused->get_header_value("Connection"), "close");
    EXPECT_EQ(json::parse(refused->body).value("Error", ""),
              "a GET request carries no body (send it without one)");
    auto served = client->Get("/pods");
    ASSERT_TRUE(served) << httplib::to_string(served.error());
    EXPECT_EQ(served->status, 200) << served->body;
  }
}

TEST(ListenerSecurity, ExtenderRefusesAnExposedAddressUnlessInsecure) {
  ServerOptions options;
  ExtenderServer exposed(options);
  auto refused = exposed.start("0.0.0.0", 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("refusing to listen on 0.0.0.0"), std::string::npos)
      << refused.error();
  options.security.insecure = true;
  ExtenderServer insecure(options);
  auto port = insecure.start("0.0.0.0", 0);
  ASSERT_TRUE(port.ok()) << port.error();
  httplib::Client client("127.0.0.1", port.value());
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);  // listening, no extender attached
  insecure.stop();
}

}  // namespace
}  // namespace greensched::serve
