package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/resource"
)

func (s *Server) putSubscription(c echo.Context) error {
	topic, name := param(c, "topic"), param(c, "sub")
	body, err := s.readManagementBody(c)
	if err != nil {
		return err
	}
	sub, err := resource.DecodeSubscription(body, topic, name)
	if err != nil {
		return err
	}
	stored, created, err := s.registry.PutSubscription(c.Request().Context(), sub)
	if err != nil {
		return err
	}
	s.log.Info().Str("topic", stored.Topic).Str("subscription", stored.Name).
		Str("endpointType", string(stored.Destination.EndpointType)).Bool("created", created).Msg("event subscription saved")
	return c.JSON(http.StatusOK, resource.NewSubscription(stored, s.opts.IDPrefix))
}

func (s *Server) getSubscription(c echo.Context) error {
	sub, err := s.registry.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resource.NewSubscription(sub, s.opts.IDPrefix))
}

func (s *Server) listSubscriptions(c echo.Context) error {
	subs, err := s.registry.Subscriptions(c.Request().Context(), param(c, "topic"))
	if err != nil {
		return err
	}
	out := make([]resource.Subscription, 0, len(subs))
	for _, sub := range subs {
		out = append(out, resource.NewSubscription(sub, s.opts.IDPrefix))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) deleteSubscription(c echo.Context) error {
	topic, name := param(c, "topic"), param(c, "sub")
	if err := s.registry.DeleteSubscription(c.Request().Context(), topic, name); err != nil {
		return err
	}
	s.log.Info().Str("topic", topic).Str("subscription", name).Msg("event subscription deleted")
	return c.NoContent(http.StatusOK)
}
