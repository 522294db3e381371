package eventgrid

import "errors"

// The sources of declared configuration (docs/live-config.md).
const (
	// SourceDesiredConfig is the desired_config setting, applied at start.
	SourceDesiredConfig = "desired_config"
	// SourceDesiredConfigFile is the file desired_config_file names,
	// followed live.
	SourceDesiredConfigFile = "desired_config_file"
	// SourceModuleTwin is the module twin's desired properties, followed
	// live.
	SourceModuleTwin = "moduleTwin"
)

// Owner says what manages a topic or an event subscription. The zero Owner
// is the REST API. Any other is a source of declared configuration, which
// alone changes or deletes what it declared: the REST API cannot, and a
// declaration never takes over what the API or another source made.
type Owner struct {
	// Source is one of the Source* constants; empty for the REST API.
	Source string
	// File is desired_config_file's path, for SourceDesiredConfigFile.
	File string
}

// Declared reports whether o is a source of declared configuration rather
// than the REST API.
func (o Owner) Declared() bool { return o.Source != "" }

// String names o as the API shows it (properties.managedBy):
// desired_config, desired_config_file:<path> or moduleTwin; empty for the
// REST API.
func (o Owner) String() string {
	if o.File != "" {
		return o.Source + ":" + o.File
	}
	return o.Source
}

// where describes o as a place a declaration is made.
func (o Owner) where() string {
	switch o.Source {
	case SourceDesiredConfig:
		return "the desired_config setting"
	case SourceDesiredConfigFile:
		return "desired_config_file " + o.File
	case SourceModuleTwin:
		return "the module twin's desired properties"
	case "":
		return "the REST API"
	}
	return o.String()
}

// howToChange says how what o declares is changed.
func (o Owner) howToChange() string {
	switch o.Source {
	case SourceDesiredConfig:
		return "change the setting and restart the broker"
	case SourceDesiredConfigFile:
		return "edit that file (the broker applies it within desired_config_pollIntervalInSeconds; with the Helm chart, the desiredConfig value)"
	case SourceModuleTwin:
		return "update them in IoT Hub (the deployment manifest, or az iot hub module-twin update)"
	}
	return "change it there"
}

// OwnerConflict is the error that refuses owner by a change to a topic or
// event subscription that owner have manages. what names the resource, as
// in `Topic "orders"` or `Event subscription "hot" of topic "orders"`; the
// message says where it is declared and how to change it there. A
// declaration refused by what the REST API manages gets an error for which
// HeldByAPI is true.
func OwnerConflict(what string, have, by Owner) error {
	switch {
	case !by.Declared():
		return Errorf(EConflict, "%s is declared in %s, which alone changes or deletes it: %s. Remove it from there to manage it over the REST API.", what, have.where(), have.howToChange())
	case !have.Declared():
		return &heldByAPI{Errorf(EConflict, "%s was created over the REST API before this declaration named it; a declaration does not take over what the REST API manages, so the entry is not applied. %s", what, untilDeleted)}
	}
	return Errorf(EConflict, "%s is declared in %s already; declare it in one place only.", what, have.where())
}

// ReleasedConflict is OwnerConflict for a topic that passed to the REST
// API when released, the source that declared it, stopped declaring it
// while it held event subscriptions of others.
func ReleasedConflict(what string, released Owner) error {
	return &heldByAPI{Errorf(EConflict, "%s passed to the REST API when %s stopped declaring it while it held event subscriptions of others; a declaration does not take over what the REST API manages, so the entry is not applied. %s", what, released.where(), untilDeleted)}
}

// untilDeleted ends the messages of HeldByAPI errors.
const untilDeleted = "Delete it over the REST API and the declaration applies it at once, or declare another name."

// heldByAPI marks an error as the refusal of a declaration by a topic or
// event subscription the REST API manages.
type heldByAPI struct{ err *Error }

func (e *heldByAPI) Error() string { return e.err.Error() }
func (e *heldByAPI) Unwrap() error { return e.err }

// HeldByAPI reports whether err refuses a declaration because the REST
// API manages the topic or event subscription it names. Only a DELETE over
// the REST API ends that: waiting on a timer would not.
func HeldByAPI(err error) bool {
	var h *heldByAPI
	return errors.As(err, &h)
}
