package rest

import (
	"net/http"
	"net/http/httptest"

	"github.com/labstack/echo/v4"
)

func echoFor(f *fixture) *echo.Echo { e := echo.New(); f.h.Mount(e.Group("/rest/v1")); return e }
func httptestReq(target, id string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("apikey", testKey)
	req.Header.Set("Authorization", "Bearer user:"+id)
	return req
}
func newRec() *httptest.ResponseRecorder { return httptest.NewRecorder() }
