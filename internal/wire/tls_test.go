package wire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handshake runs a TLS handshake between the host's and the plugin's
// configurations over an in-memory connection and returns the first
// side's error: in TLS 1.3 the client is done before the server has
// checked the client's certificate, so a refused client shows only on the
// server's side.
func handshake(t *testing.T, host, plugin *tls.Config) error {
	t.Helper()
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() {
		err := tls.Server(b, plugin).Handshake()
		b.Close()
		done <- err
	}()
	c := tls.Client(a, host)
	err := c.Handshake()
	if err == nil {
		// Let the server finish reading the client's flight.
		_, _ = c.Read(make([]byte, 1))
	}
	a.Close()
	if serr := <-done; err == nil {
		err = serr
	}
	return err
}

// pluginSide returns the plugin's configuration for the host's
// certificate env entry, made in dir.
func pluginSide(t *testing.T, dir, env string) *tls.Config {
	t.Helper()
	pem, ok := strings.CutPrefix(env, clientCertEnv+"=")
	if !ok {
		t.Fatalf("host's environment entry %.40q… does not set %s", env, clientCertEnv)
	}
	cfg, err := pluginTLS(dir, pem)
	if err != nil || cfg == nil {
		t.Fatalf("pluginTLS = %v, %v; want a configuration", cfg, err)
	}
	return cfg
}

func TestPinnedTLS(t *testing.T) {
	tests := []struct {
		name string
		// tamper changes what the plugin left in dir before the handshake.
		tamper  func(t *testing.T, dir string)
		wantErr string // "" if the handshake must succeed
	}{
		{name: "pinned certificate", tamper: func(*testing.T, string) {}},
		{name: "another certificate in the file", wantErr: "other than the one it wrote", tamper: func(t *testing.T, dir string) {
			_, der, err := newCert()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, serverCertFile), der, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "no certificate file", wantErr: "TLS certificate", tamper: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, serverCertFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a link instead of the file", wantErr: "TLS certificate", tamper: func(t *testing.T, dir string) {
			path := filepath.Join(dir, serverCertFile)
			if err := os.Rename(path, path+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+".real", path); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			host, env, err := hostTLS(dir)
			if err != nil {
				t.Fatal(err)
			}
			plugin := pluginSide(t, dir, env)
			tt.tamper(t, dir)
			err = handshake(t, host, plugin)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("handshake: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("handshake error %v, want one containing %q", err, tt.wantErr)
			}
			if tt.wantErr == "" && tlsKind(host) != "p256-pinned" {
				t.Errorf("tlsKind = %q, want p256-pinned", tlsKind(host))
			}
		})
	}
}

// TestPinnedTLSRefusesOtherClient checks the plugin's side: a client
// without the host's key is refused.
func TestPinnedTLSRefusesOtherClient(t *testing.T) {
	dir := t.TempDir()
	host, env, err := hostTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	plugin := pluginSide(t, dir, env)
	other, _, err := hostTLS(dir) // same pin, another client key
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, other, plugin); err == nil {
		t.Fatal("a client with another key completed the handshake")
	}
	// The same plugin configuration still accepts the host.
	if err := handshake(t, host, plugin); err != nil {
		t.Fatalf("the host's handshake after a refused one: %v", err)
	}
}

// TestAutoMTLSFallback checks the host against a plugin that answers with
// go-plugin's AutoMTLS (an older SDK): its certificate arrives in the
// handshake line and go-plugin loads it as RootCAs.
func TestAutoMTLSFallback(t *testing.T) {
	dir := t.TempDir() // the plugin wrote nothing here
	host, env, err := hostTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := strings.CutPrefix(env, clientCertEnv+"=")
	clients := x509.NewCertPool()
	if !clients.AppendCertsFromPEM([]byte(pem)) {
		t.Fatal("host's certificate does not parse")
	}
	cert, der, err := newCert()
	if err != nil {
		t.Fatal(err)
	}
	plugin := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: clients}
	if err := handshake(t, host, plugin); err == nil {
		t.Fatal("handshake succeeded with neither a pinned nor an announced certificate")
	}
	// What go-plugin's loadServerCert does with the handshake line's
	// certificate.
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	host.RootCAs = roots
	if err := handshake(t, host, plugin); err != nil {
		t.Fatalf("handshake with the announced certificate: %v", err)
	}
	if tlsKind(host) != "automtls" {
		t.Errorf("tlsKind = %q, want automtls", tlsKind(host))
	}
	// Another server key is refused even so.
	cert2, _, err := newCert()
	if err != nil {
		t.Fatal(err)
	}
	plugin.Certificates = []tls.Certificate{cert2}
	if err := handshake(t, host, plugin); err == nil {
		t.Fatal("handshake succeeded with a certificate other than the announced one")
	}
}

func TestPluginTLSFallsBack(t *testing.T) {
	dir := t.TempDir()
	_, env, err := hostTLS(dir)
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := strings.CutPrefix(env, clientCertEnv+"=")
	if err := os.WriteFile(filepath.Join(dir, serverCertFile), []byte("someone else's"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, pem string
	}{
		{"no blob directory", "", pem},
		{"no host certificate", dir, ""},
		{"certificate file already there", dir, pem},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := pluginTLS(tt.dir, tt.pem)
			if cfg != nil || err != nil {
				t.Errorf("pluginTLS = %v, %v; want nil, nil (go-plugin's AutoMTLS)", cfg, err)
			}
		})
	}
	if _, err := pluginTLS(dir, "not a certificate"); err == nil {
		t.Error("pluginTLS accepted a malformed host certificate")
	}
}

// BenchmarkTLSKeys is the cost of the key operations a plugin connection
// makes, for go-plugin's AutoMTLS curve (P-521) and ours (P-256): a key
// generation, an ECDSA signature and a signature check.
func BenchmarkTLSKeys(b *testing.B) {
	for _, curve := range []elliptic.Curve{elliptic.P521(), elliptic.P256()} {
		name := curve.Params().Name
		key, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		digest := sha256.Sum256([]byte("tcforge"))
		sig, err := ecdsa.SignASN1(rand.Reader, key, digest[:])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/generate", func(b *testing.B) {
			for b.Loop() {
				if _, err := ecdsa.GenerateKey(curve, rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/sign", func(b *testing.B) {
			for b.Loop() {
				if _, err := ecdsa.SignASN1(rand.Reader, key, digest[:]); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/verify", func(b *testing.B) {
			for b.Loop() {
				if !ecdsa.VerifyASN1(&key.PublicKey, digest[:], sig) {
					b.Fatal("signature does not verify")
				}
			}
		})
	}
}
