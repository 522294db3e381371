package api

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/eventgrid"
	"github.com/edgegrid/edgegrid/pkg/inspect"
	"github.com/edgegrid/edgegrid/pkg/resource"
)

func (s *Server) putSubscription(c echo.Context) error {
	topic, name := param(c, "topic"), param(c, "sub")
	body, err := s.readResourceBody(c)
	if err != nil {
		return err
	}
	// A PUT may leave out the secrets GET does not return and keep the
	// stored ones (docs/api.md#secrets).
	ctx := c.Request().Context()
	old, err := s.resources.Subscription(ctx, topic, name)
	if err != nil {
		old = nil // a new subscription, or a missing topic PutSubscription reports
	}
	sub, err := resource.DecodeSubscriptionUpdate(body, topic, name, old)
	if err != nil {
		return err
	}
	// A validation handshake may wait for the endpoint: never past the
	// request timeout.
	if s.opts.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.RequestTimeout)
		defer cancel()
	}
	stored, created, err := s.resources.PutSubscription(ctx, sub)
	if err != nil {
		return err
	}
	s.log.Info().Str("topic", stored.Topic).Str("subscription", stored.Name).
		Str("endpointType", stored.EndpointTypeName()).Bool("created", created).Msg("event subscription saved")
	return c.JSON(http.StatusOK, s.subscription(stored))
}

func (s *Server) getSubscription(c echo.Context) error {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.subscription(sub))
}

// getFullURL answers POST …/eventSubscriptions/{name}/getFullUrl, as Azure
// does: the destination URL with the query GET leaves out.
func (s *Server) getFullURL(c echo.Context) error {
	sub, err := s.resources.Subscription(c.Request().Context(), param(c, "topic"), param(c, "sub"))
	if err != nil {
		return err
	}
	switch {
	case sub.Queue != nil:
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "The event subscription %q has no endpoint URL: it is a queue subscription, whose events are received.", sub.Name)
	case sub.Destination.EndpointURL == "":
		return eventgrid.Errorf(eventgrid.EInvalidDestination, "The event subscription %q has no endpoint URL: its destination is of type %s.", sub.Name, sub.Destination.EndpointType)
	}
	return c.JSON(http.StatusOK, map[string]string{"endpointUrl": sub.Destination.EndpointURL})
}

func (s *Server) listSubscriptions(c echo.Context) error {
	subs, err := s.resources.Subscriptions(c.Request().Context(), param(c, "topic"))
	if err != nil {
		return err
	}
	out := make([]resource.Subscription, 0, len(subs))
	for _, sub := range subs {
		out = append(out, s.subscription(sub))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) deleteSubscription(c echo.Context) error {
	topic, name := param(c, "topic"), param(c, "sub")
	if err := s.resources.DeleteSubscription(c.Request().Context(), topic, name); err != nil {
		return err
	}
	s.log.Info().Str("topic", topic).Str("subscription", name).Msg("event subscription deleted")
	return c.NoContent(http.StatusOK)
}

// subscription builds a subscription's response, with its delivery status
// when the broker reports one.
func (s *Server) subscription(sub *eventgrid.EventSubscription) resource.Subscription {
	r := resource.NewSubscription(sub, s.opts.IDPrefix)
	if s.svc.Status == nil {
		return r
	}
	if st, ok := s.svc.Status.Status(sub); ok {
		var tot inspect.Totals
		if s.svc.Board != nil {
			tot = s.svc.Board.Subscription(sub.UID).Totals()
		}
		r.Properties.DeliveryStatus = resource.NewDeliveryStatus(sub.IsQueue(), st, tot)
	}
	return r
}
