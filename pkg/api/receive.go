package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/rawjson"
)

func (s *Server) receive(c echo.Context) error {
	maxEvents, err := intQuery(c, "maxEvents", 1, 1, 100)
	if err != nil {
		return err
	}
	waitSeconds, err := intQuery(c, "maxWaitTime", 60, 10, 120)
	if err != nil {
		return err
	}
	sub, err := s.queueSubscription(c)
	if err != nil {
		return err
	}
	wait := time.Duration(waitSeconds) * time.Second
	// A long poll outlasts the server's request timeout: this request gets
	// the wait on top of it.
	rc := http.NewResponseController(c.Response())
	deadline := time.Now().Add(wait + s.opts.RequestTimeout)
	_ = rc.SetReadDeadline(deadline)
	_ = rc.SetWriteDeadline(deadline)
	got, err := s.opts.Queues.Receive(c.Request().Context(), sub, maxEvents, wait)
	if err != nil {
		return err
	}
	out := make([]byte, 0, 64+len(got)*128)
	out = append(out, `{"value":[`...)
	for i, r := range got {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"brokerProperties":{"lockToken":`...)
		out = rawjson.AppendString(out, r.LockToken)
		out = append(out, `,"deliveryCount":`...)
		out = strconv.AppendInt(out, int64(r.DeliveryCount), 10)
		out = append(out, `},"event":`...)
		out = append(out, r.Body...)
		out = append(out, '}')
	}
	out = append(out, "]}"...)
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, out)
}
