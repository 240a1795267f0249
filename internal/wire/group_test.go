package wire

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// named is a Handler that says its name.
type named string

func (h named) Describe() ([]byte, error) { return []byte(h), nil }

func (h named) Call(context.Context, string, []byte, []byte, *Times) ([]byte, error) {
	return []byte(h), nil
}

// TestRoute: a process serving one plugin serves every call, named or
// not; a group's process serves a call by the plugin it names, and refuses
// one that names none, several or another.
func TestRoute(t *testing.T) {
	one := &server{impls: map[string]Handler{"": named("solo")}}
	group := &server{impls: map[string]Handler{"a": named("A"), "b": named("B")}}
	tests := []struct {
		name string
		s    *server
		md   metadata.MD
		want string // the handler's name, or "" for an error
		code codes.Code
		err  string
	}{
		{"one, unnamed", one, nil, "solo", codes.OK, ""},
		{"one, named", one, metadata.Pairs(mdPlugin, "x"), "solo", codes.OK, ""},
		{"group, a", group, metadata.Pairs(mdPlugin, "a"), "A", codes.OK, ""},
		{"group, b", group, metadata.Pairs(mdPlugin, "b"), "B", codes.OK, ""},
		{"group, unnamed", group, nil, "", codes.InvalidArgument, "this process serves a group of plugins: a call must name one (0 names)"},
		{"group, two names", group, metadata.Pairs(mdPlugin, "a", mdPlugin, "b"), "", codes.InvalidArgument, "this process serves a group of plugins: a call must name one (2 names)"},
		{"group, unknown", group, metadata.Pairs(mdPlugin, "c"), "", codes.NotFound, `this process serves no plugin named "c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, err := tt.s.route(tt.md)
			if tt.want != "" {
				if err != nil || h == nil {
					t.Fatalf("route = %v, %v; want handler %s", h, err, tt.want)
				}
				if d, _ := h.Describe(); string(d) != tt.want {
					t.Errorf("routed to %s, want %s", d, tt.want)
				}
				return
			}
			st, _ := status.FromError(err)
			if h != nil || st.Code() != tt.code || st.Message() != tt.err {
				t.Errorf("route = %v, %v; want %v %q", h, err, tt.code, tt.err)
			}
		})
	}
}
