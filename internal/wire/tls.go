package wire

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The connection to a plugin is mutual TLS, each side with a key of its
// own that never leaves its process and a certificate the other side pins,
// as with go-plugin's AutoMTLS. AutoMTLS hard-codes P-521 keys: a key and a
// self-signed certificate made on each side and four P-521 signatures made
// or checked in the TLS handshake cost about 23 ms of CPU per plugin on the
// development machine (a P-521 signature check alone 6.5 ms), on the path
// of every run's start. tcforge makes the same exchange with P-256 keys
// (about 0.2 ms in all):
//
//   - The host makes its key and certificate and passes the certificate to
//     the plugin in PLUGIN_CLIENT_CERT, the variable AutoMTLS uses.
//   - The plugin (ServeConfig's TLSProvider) makes its own, trusts only the
//     host's certificate for clients, and writes its certificate to
//     serverCertFile in its blob directory (private to this host and this
//     plugin, blobfile.go) before it announces itself.
//   - The host accepts only a server presenting exactly that certificate.
//
// A plugin built against an older SDK, or one without a usable blob
// directory, answers the same variable with AutoMTLS (its P-521 certificate
// in the handshake line, which go-plugin loads as the client's RootCAs);
// the host then checks the server's certificate against that, as
// go-plugin would.
const (
	// clientCertEnv is go-plugin's AutoMTLS variable for the host's
	// certificate (PEM).
	clientCertEnv = "PLUGIN_CLIENT_CERT"
	// serverCertFile, in the plugin's blob directory, holds the plugin's
	// certificate (DER).
	serverCertFile = "tls-server-cert.der"
	// tlsName is the name both certificates are made for (AutoMTLS's).
	tlsName = "localhost"
)

// newCert makes a P-256 key and a self-signed certificate for tlsName, good
// for both ends of a connection, and returns it with the certificate's DER.
func newCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("making a TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("making a certificate serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: tlsName, Organization: []string{"tcforge plugin connection"}},
		DNSNames:              []string{tlsName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("making a TLS certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, der, nil
}

// hostTLS returns the host's TLS configuration for a plugin whose blob
// directory is dir ("" if none) and the environment entry that passes the
// host's certificate to it. The configuration accepts a server presenting
// the certificate the plugin wrote to dir (pinServer), or, if go-plugin
// has loaded one from the handshake line into its RootCAs (AutoMTLS: a
// plugin built against an older SDK), one that verifies against those.
func hostTLS(dir string) (*tls.Config, string, error) {
	cert, der, err := newCert()
	if err != nil {
		return nil, "", err
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		ServerName:   tlsName,
		// Verification is VerifyPeerCertificate's: a pinned certificate
		// has no chain to verify. The handshake still proves the server
		// holds the key of the certificate it presents.
		InsecureSkipVerify: true, //nolint:gosec // verified below
	}
	pin := &pinServer{dir: dir, cfg: cfg}
	cfg.VerifyPeerCertificate = pin.verify
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return cfg, clientCertEnv + "=" + string(block), nil
}

// pinServer checks the certificate a plugin presents.
type pinServer struct {
	dir string
	cfg *tls.Config // its RootCAs is set by go-plugin for an AutoMTLS plugin

	once   sync.Once
	pinned []byte
	err    error
}

// verify implements tls.Config.VerifyPeerCertificate.
func (p *pinServer) verify(raw [][]byte, _ [][]*x509.Certificate) error {
	if len(raw) == 0 {
		return errors.New("plugin presented no TLS certificate")
	}
	if roots := p.cfg.RootCAs; roots != nil {
		// AutoMTLS: the certificate came in the handshake line.
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("plugin's TLS certificate: %w", err)
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: tlsName, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		if err != nil {
			return fmt.Errorf("plugin's TLS certificate: %w", err)
		}
		return nil
	}
	p.once.Do(func() { p.pinned, p.err = readServerCert(p.dir) })
	if p.err != nil {
		return p.err
	}
	if !bytes.Equal(raw[0], p.pinned) {
		return errors.New("plugin presented a TLS certificate other than the one it wrote to its blob directory")
	}
	return nil
}

// readServerCert reads the certificate a plugin wrote to its blob
// directory dir: a regular file, not a link, of at most 64 KiB.
func readServerCert(dir string) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("plugin announced neither a TLS certificate nor a blob directory to find one in")
	}
	f, err := openNoFollow(filepath.Join(dir, serverCertFile))
	if err != nil {
		return nil, fmt.Errorf("plugin's TLS certificate: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("plugin's TLS certificate: %w", err)
	}
	const maxCert = 64 << 10
	if !fi.Mode().IsRegular() || fi.Size() > maxCert {
		return nil, fmt.Errorf("plugin's TLS certificate %s: not a regular file of at most %d bytes", fi.Name(), maxCert)
	}
	der := make([]byte, fi.Size())
	if _, err := f.ReadAt(der, 0); err != nil {
		return nil, fmt.Errorf("plugin's TLS certificate: %w", err)
	}
	return der, nil
}

// pluginTLS is the plugin side (ServeConfig's TLSProvider): with the
// host's certificate in clientCertEnv and a usable blob directory dir, it
// makes the plugin's key and certificate, writes the certificate to dir
// and returns a configuration that requires the host's certificate of
// clients. Otherwise it returns nil, and go-plugin falls back to AutoMTLS
// (or to no TLS, if the host asked for none).
func pluginTLS(dir, clientPEM string) (*tls.Config, error) {
	if dir == "" || clientPEM == "" {
		return nil, nil
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(clientPEM)) {
		return nil, fmt.Errorf("%s holds no certificate", clientCertEnv)
	}
	cert, der, err := newCert()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, serverCertFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		// Leave it to AutoMTLS (an existing file is not ours to trust).
		return nil, nil
	}
	_, err = f.Write(der)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, nil
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
		MinVersion:   tls.VersionTLS12,
		ServerName:   tlsName,
	}, nil
}

// tlsKind names the TLS a started plugin's connection uses, for the log:
// "p256-pinned" (hostTLS with a plugin that wrote its certificate),
// "automtls" (go-plugin's, P-521).
func tlsKind(cfg *tls.Config) string {
	if cfg == nil || cfg.RootCAs != nil {
		return "automtls"
	}
	return "p256-pinned"
}
