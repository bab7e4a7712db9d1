package main

// Certificates and credentials of the test clusters, made with Go's crypto packages: per
// cluster a CA and the API server's serving certificate, a service-account signing key, and a
// static bearer token in the group system:masters (every client of the test is an admin: the
// greensched dispatch service reads the workers with the same kind of token an operator gives
// it). Kueue's webhook certificates follow what its cert rotator accepts without replacing
// them: RSA keys in PKCS#1, the CA valid for DNS "kueue-ca", the server certificate for the
// webhook Service's DNS name, both valid for more than the rotator's 90-day lookahead.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

type keyPair struct {
	cert    *x509.Certificate
	key     any
	certPEM []byte
	keyPEM  []byte
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func keyPEM(key any) []byte {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			panic(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	}
	panic("unknown key type")
}

func publicKey(key any) any {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		return &k.PublicKey
	case *ecdsa.PrivateKey:
		return &k.PublicKey
	}
	panic("unknown key type")
}

func newKey(useRSA bool) any {
	if useRSA {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

// issue signs a certificate for `tmpl` with `ca` (self-signed when ca is nil).
func issue(tmpl *x509.Certificate, ca *keyPair, useRSA bool) *keyPair {
	key := newKey(useRSA)
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour)
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, publicKey(key), signer)
	if err != nil {
		panic(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return &keyPair{cert: cert, key: key,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM: keyPEM(key)}
}

func newCA(name string, useRSA bool, dnsNames ...string) *keyPair {
	return issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, DNSNames: dnsNames,
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		NotAfter: time.Now().Add(10 * 365 * 24 * time.Hour)}, nil, useRSA)
}

func serving(ca *keyPair, name string, useRSA bool, dnsNames []string, ips []net.IP) *keyPair {
	return issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, DNSNames: dnsNames,
		IPAddresses: ips, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		NotAfter:    time.Now().Add(5 * 365 * 24 * time.Hour)}, ca, useRSA)
}

// clusterPKI is what one cluster's processes are given, as files under dir.
type clusterPKI struct {
	dir                     string
	caFile, certFile        string
	keyFile                 string
	saPub, saKey            string
	tokenFile, tokensCSV    string
	token                   string
	kueueCertDir            string
	kueueCA, kueueTLS       *keyPair
	kubeconfig, kubeconfigT string // the admin kubeconfig file and its text
}

func writeFile(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		panic(err)
	}
}

func makePKI(dir, cluster, server string, hostIP net.IP) *clusterPKI {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	p := &clusterPKI{dir: dir}
	ca := newCA(cluster+"-ca", false)
	api := serving(ca, "kube-apiserver", false,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		[]net.IP{net.ParseIP("127.0.0.1"), hostIP})
	p.caFile, p.certFile, p.keyFile = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "apiserver.crt"),
		filepath.Join(dir, "apiserver.key")
	writeFile(p.caFile, ca.certPEM)
	writeFile(p.certFile, api.certPEM)
	writeFile(p.keyFile, api.keyPEM)

	sa := newKey(false).(*ecdsa.PrivateKey)
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		panic(err)
	}
	p.saKey, p.saPub = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	writeFile(p.saKey, keyPEM(sa))
	writeFile(p.saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))

	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	p.token = hex.EncodeToString(b)
	p.tokenFile, p.tokensCSV = filepath.Join(dir, "admin.token"), filepath.Join(dir, "tokens.csv")
	writeFile(p.tokenFile, []byte(p.token+"\n"))
	writeFile(p.tokensCSV, []byte(fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", p.token)))

	p.kubeconfigT = fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority-data: %[3]s
users:
- name: admin
  user:
    token: %[4]s
contexts:
- name: %[1]s
  context: {cluster: %[1]s, user: admin}
current-context: %[1]s
`, cluster, server, b64(ca.certPEM), p.token)
	p.kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	writeFile(p.kubeconfig, []byte(p.kubeconfigT))

	p.kueueCertDir = filepath.Join(dir, "kueue-certs")
	if err := os.MkdirAll(p.kueueCertDir, 0o755); err != nil {
		panic(err)
	}
	p.kueueCA = newCA("kueue-ca", true, "kueue-ca")
	p.kueueTLS = serving(p.kueueCA, "kueue-webhook-service.kueue-system.svc", true,
		[]string{"kueue-webhook-service.kueue-system.svc"}, nil)
	writeFile(filepath.Join(p.kueueCertDir, "ca.crt"), p.kueueCA.certPEM)
	writeFile(filepath.Join(p.kueueCertDir, "ca.key"), p.kueueCA.keyPEM)
	writeFile(filepath.Join(p.kueueCertDir, "tls.crt"), p.kueueTLS.certPEM)
	writeFile(filepath.Join(p.kueueCertDir, "tls.key"), p.kueueTLS.keyPEM)
	return p
}
