package dispatchclient

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// authority is a throwaway CA that signs certificates for the tests.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newAuthority(t *testing.T, name string) *authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate for `usage`; returns it as a tls.Certificate and as PEM files.
func (a *authority) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, write(t, name+".crt", string(certPEM)), write(t, name+".key", string(keyPEM))
}

func write(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverCA is the PEM of the certificate httptest's TLS servers use (self-signed).
func serverCA(t *testing.T, srv *httptest.Server) string {
	return write(t, "server-ca.crt",
		string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
}

// dispatchService answers like `greensched dispatch` with --auth-token-file: 401 with
// {"error"} unless the request carries the token `want()` returns.
func dispatchService(want func() string, seen *[]string, mu *sync.Mutex) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		mu.Lock()
		*seen = append(*seen, got)
		mu.Unlock()
		if got != "Bearer "+want() {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"wrong bearer token"}`))
			return
		}
		_, _ = w.Write([]byte(`{"clusters":["gb"],"mode":"carbon"}`))
	}
}

func workload() *kueue.Workload {
	wl := &kueue.Workload{}
	wl.Namespace, wl.Name = "default", "train"
	return wl
}

func TestTokenSentOverVerifiedTLSAndRotated(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	want := "first-token"
	srv := httptest.NewTLSServer(dispatchService(func() string { mu.Lock(); defer mu.Unlock(); return want }, &seen, &mu))
	defer srv.Close()
	tokenFile := write(t, "token", "first-token\n")
	c, err := NewWithOptions(srv.URL, Options{TokenFile: tokenFile, CAFile: serverCA(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	c.Token.Recheck = 0 // look at the file on every request
	a, err := c.Dispatch(context.Background(), workload(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Clusters) != 1 || a.Clusters[0] != "gb" {
		t.Fatalf("answer %+v, want cluster gb", a)
	}
	if seen[0] != "Bearer first-token" {
		t.Fatalf("sent Authorization %q, want the file's token without its newline", seen[0])
	}
	// Rotation: the service takes the new token, the file is replaced, no new client.
	mu.Lock()
	want = "second-token"
	mu.Unlock()
	if err := os.WriteFile(tokenFile+".new", []byte("second-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tokenFile+".new", tokenFile); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Dispatch(context.Background(), workload(), nil); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if seen[1] != "Bearer second-token" {
		t.Fatalf("after rotation sent %q, want Bearer second-token", seen[1])
	}
}

func TestTokenFileRecheckedAtMostOncePerInterval(t *testing.T) {
	path := write(t, "token", "a")
	f, err := OpenTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Recheck = time.Hour
	if err := os.WriteFile(path, []byte("bb"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := f.Token(); got != "a" {
		t.Fatalf("within the interval got %q, want the token read first", got)
	}
	f.Recheck = 0
	if got := f.Token(); got != "bb" {
		t.Fatalf("after the interval got %q, want bb", got)
	}
	// Emptied mid-rewrite: the previous token stays in force.
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := f.Token(); got != "bb" {
		t.Fatalf("with the file empty got %q, want bb", got)
	}
	if _, err := OpenTokenFile(path); err == nil {
		t.Fatal("an empty token file opened without an error")
	}
}

func TestUnauthorizedIsAClearError(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(dispatchService(func() string { return "right" }, &seen, &mu))
	defer srv.Close()
	c, err := NewWithOptions(srv.URL, Options{TokenFile: write(t, "token", "wrong"), CAFile: serverCA(t, srv)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Dispatch(context.Background(), workload(), nil)
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("got %v, want ErrUnauthorized", err)
	}
	for _, part := range []string{"HTTP 401", "wrong bearer token", "--dispatch-token-file"} {
		if !strings.Contains(err.Error(), part) {
			t.Fatalf("error %q does not say %q", err, part)
		}
	}
}

func TestServiceCertificateVerifiedAgainstCA(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(dispatchService(func() string { return "t" }, &seen, &mu))
	defer srv.Close()
	token := write(t, "token", "t")
	other := newAuthority(t, "another CA")
	c, err := NewWithOptions(srv.URL, Options{TokenFile: token, CAFile: write(t, "other.crt", string(other.pem))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Dispatch(context.Background(), workload(), nil)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("with a CA that did not sign the service's certificate got %v, want a certificate error", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Fatalf("the token reached a service whose certificate did not verify (%d requests)", len(seen))
	}
	if _, err := NewWithOptions(srv.URL, Options{CAFile: write(t, "junk.crt", "not a certificate")}); err == nil {
		t.Fatal("a CA file without a certificate was accepted")
	}
}

func TestClientCertificateForMutualTLS(t *testing.T) {
	ca := newAuthority(t, "clients CA")
	_, certFile, keyFile := ca.issue(t, "greensched-kueue", x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(dispatchService(func() string { return "t" }, &seen, &mu))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	token := write(t, "token", "t")
	serverCAFile := serverCA(t, srv)

	with, err := NewWithOptions(srv.URL, Options{TokenFile: token, CAFile: serverCAFile, ClientCert: certFile, ClientKey: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := with.Dispatch(context.Background(), workload(), nil); err != nil {
		t.Fatalf("with a client certificate the CA signed: %v", err)
	}
	without, err := NewWithOptions(srv.URL, Options{TokenFile: token, CAFile: serverCAFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := without.Dispatch(context.Background(), workload(), nil); err == nil {
		t.Fatal("without a client certificate the request went through")
	}
	if _, err := NewWithOptions(srv.URL, Options{ClientCert: certFile}); err == nil {
		t.Fatal("a client certificate without its key was accepted")
	}
}

func TestRequestDeadlineKept(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := NewWithOptions(srv.URL, Options{CAFile: serverCA(t, srv), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Dispatch(context.Background(), workload(), nil)
	if err == nil {
		t.Fatal("a service that never answers gave no error")
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("waited %v for a 200 ms deadline", waited)
	}
	if plain := New(srv.URL); plain.HTTP.Timeout != DefaultTimeout {
		t.Fatalf("New's timeout is %v, want %v", plain.HTTP.Timeout, DefaultTimeout)
	}
}

func TestTokenNeverSentInClearToARemoteHost(t *testing.T) {
	token := write(t, "token", "t")
	if _, err := NewWithOptions("http://dispatch.example.com:8090", Options{TokenFile: token}); err == nil ||
		!strings.Contains(err.Error(), "unencrypted") {
		t.Fatalf("http to a remote host with a token: got %v, want a refusal", err)
	}
	if _, err := NewWithOptions("http://127.0.0.1:8090", Options{TokenFile: token}); err != nil {
		t.Fatalf("http to loopback with a token: %v", err)
	}
	if _, err := NewWithOptions("http://dispatch:8090", Options{CAFile: token}); err == nil {
		t.Fatal("a CA file with an http URL was accepted")
	}
}
