package pg

import "testing"

func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		code string
		anon bool
		want int
	}{
		{"PT409", false, 409},
		{"PT403", false, 403},
		{"PT999", false, 400}, // not a status: the default
		{"23505", false, 409},
		{"23503", false, 409},
		{"42501", true, 401},
		{"42501", false, 403},
		{"42P01", false, 404},
		{"P0001", false, 400},
		{"22P02", false, 400},
		{"23514", false, 400},
		{"08006", false, 503},
		{"40001", false, 500},
		{"XX000", false, 500},
	}
	for _, c := range cases {
		if got := HTTPStatus(c.code, c.anon); got != c.want {
			t.Errorf("HTTPStatus(%q, anon=%v) = %d, want %d", c.code, c.anon, got, c.want)
		}
	}
}
