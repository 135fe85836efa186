package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cellctl/cellctl/internal/awsmodel"
	"github.com/cellctl/cellctl/internal/awssts"
)

// Accounts. The sim dir is the home account, as it always was; a second
// account N is a store of its own under accounts/<N>/ (resources, quotas,
// health, alarms, zones, tasks: everything a store holds), so each
// account's state stays where a store already keeps it and the home
// layout does not change. The home dir's accounts.json is the registry:
// which accounts exist, the IAM roles in them (trust and external id)
// and the temporary credentials STS issued, by access key id, so a later
// request signed with one is answered from its account. It is read and
// written under the home dir's lock, as every other file there.
//
//	accounts.json              the registry (this file)
//	accounts/<id>/…            a second account's store (store.go's layout)
const (
	accountsFile = "accounts.json"
	AccountsDir  = "accounts"
)

// HomeAccessKeyIDs are the static access keys cellctl signs with against
// the simulator (internal/cloud's SimAccessKeyID, internal/awsapi.Sim's
// key): requests signed with them act as the home account.
var HomeAccessKeyIDs = []string{"ASIACELLCTLSIMULATED", "AKIDSIMULATED0000000"}

// HomeUser is the IAM user the home credentials belong to, as
// GetCallerIdentity reports it.
const HomeUser = "cellctl-sim"

// issuedKeyPrefix starts every access key the simulator's STS issues:
// "ASIA" is AWS's prefix for temporary credentials.
const issuedKeyPrefix = "ASIASIM"

// Registry is accounts.json.
type Registry struct {
	Format   int                      `json:"format"`
	Accounts map[string]*AccountEntry `json:"accounts,omitempty"`
	// Sessions are the temporary credentials issued, by access key id.
	Sessions map[string]*Session `json:"sessions,omitempty"`
}

// AccountEntry is one registered account.
type AccountEntry struct {
	Roles   map[string]*Role `json:"roles,omitempty"`
	Created time.Time        `json:"created"`
}

// Role is an IAM role the simulator lets callers assume.
type Role struct {
	ARN  string `json:"arn"`
	Name string `json:"name"`
	// Trust are the account ids whose principals may assume the role.
	Trust []string `json:"trust"`
	// ExternalID, when set, must be passed by every caller.
	ExternalID string    `json:"externalId,omitempty"`
	Created    time.Time `json:"created"`
}

// Session is one set of temporary credentials STS issued.
type Session struct {
	AccessKeyID     string    `json:"accessKeyId"`
	SecretAccessKey string    `json:"secretAccessKey"`
	SessionToken    string    `json:"sessionToken"`
	Account         string    `json:"account"`
	Role            string    `json:"role"`
	RoleARN         string    `json:"roleArn"`
	SessionName     string    `json:"sessionName"`
	Expires         time.Time `json:"expires"`
}

// Account is a registered account with its roles, as listed.
type Account struct {
	ID    string `json:"id"`
	Home  bool   `json:"home,omitempty"`
	Roles []Role `json:"roles"`
}

// Identity is who signs a request: GetCallerIdentity's answer.
type Identity struct {
	Account string
	ARN     string
	UserID  string
	// Session is set for temporary credentials STS issued.
	Session *Session
}

// STSError is an STS error: its code (awssts.STS…), HTTP status and
// message, as the API answers it and the provider quotes it.
type STSError struct {
	Code    string
	Status  int
	Message string
}

func (e *STSError) Error() string {
	return fmt.Sprintf("operation error STS: AssumeRole, https response error StatusCode: %d, api error %s: %s", e.Status, e.Code, e.Message)
}

func denied(msg string) *STSError { return &STSError{awssts.STSAccessDenied, 403, msg} }
func invalid(msg string) *STSError {
	return &STSError{awssts.STSValidation, 400, msg}
}

// UnknownAccountError is a read of an account nobody registered.
type UnknownAccountError struct{ Account string }

func (e *UnknownAccountError) Error() string {
	return fmt.Sprintf("the simulated cloud has no account %s: register a role in it first (`cellctl sim account role %s <role-name>`)", e.Account, e.Account)
}

// homeAccount is the home account's id; callers hold the lock.
func (s *Store) homeAccount() (string, error) {
	var m metaFile
	if err := ReadJSON(filepath.Join(s.dir, cloudFile), &m); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if m.Account != "" {
		return m.Account, nil
	}
	return awsmodel.DefaultAccount, nil
}

func (s *Store) loadRegistry() (*Registry, error) {
	r := &Registry{}
	path := filepath.Join(s.dir, accountsFile)
	if err := ReadJSON(path, r); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if r.Format > FormatV1 {
		return nil, fmt.Errorf("%s was written by a newer cellctl (format %d)", path, r.Format)
	}
	if r.Accounts == nil {
		r.Accounts = map[string]*AccountEntry{}
	}
	if r.Sessions == nil {
		r.Sessions = map[string]*Session{}
	}
	return r, nil
}

// withRegistry runs fn on the registry under the home dir's lock (shared
// to read, exclusive to change) with the home account's id, and saves the
// registry when change is set and fn succeeds. It does not load the
// resources: every request signed with issued credentials reads it.
func (c *Cloud) withRegistry(change bool, fn func(reg *Registry, home string) error) error {
	s := c.s
	unlock, err := s.lock(change)
	if err != nil {
		return err
	}
	defer unlock()
	home, err := s.homeAccount()
	if err != nil {
		return err
	}
	reg, err := s.loadRegistry()
	if err != nil {
		return err
	}
	if err := fn(reg, home); err != nil {
		return err
	}
	if !change {
		return nil
	}
	reg.Format = FormatV1
	return WriteJSON(filepath.Join(s.dir, accountsFile), reg)
}

// HomeAccount is the home account's id.
func (c *Cloud) HomeAccount() (string, error) {
	var home string
	err := c.withRegistry(false, func(_ *Registry, h string) error { home = h; return nil })
	return home, err
}

// AddRole registers role name in account (creating the account) that the
// trust accounts may assume (none: the home account), requiring
// externalID when it is set. Registering it again replaces its trust and
// external id.
func (c *Cloud) AddRole(account, name string, trust []string, externalID string) (Role, error) {
	if err := awssts.CheckAccountID(account); err != nil {
		return Role{}, err
	}
	arn, err := awssts.ParseRoleARN("arn:aws:iam::" + account + ":role/" + name)
	if err != nil {
		return Role{}, fmt.Errorf("role name %q: %w", name, err)
	}
	for _, t := range trust {
		if err := awssts.CheckAccountID(t); err != nil {
			return Role{}, fmt.Errorf("trusted account: %w", err)
		}
	}
	if externalID != "" {
		if err := awssts.CheckExternalID(externalID); err != nil {
			return Role{}, err
		}
	}
	var role Role
	err = c.withRegistry(true, func(reg *Registry, home string) error {
		if len(trust) == 0 {
			trust = []string{home}
		}
		acct := reg.Accounts[account]
		if acct == nil {
			acct = &AccountEntry{Created: c.now()}
			reg.Accounts[account] = acct
		}
		if acct.Roles == nil {
			acct.Roles = map[string]*Role{}
		}
		t := slices.Clone(trust)
		slices.Sort(t)
		role = Role{ARN: arn.String(), Name: arn.Name, Trust: slices.Compact(t), ExternalID: externalID, Created: c.now()}
		acct.Roles[arn.Name] = &role
		return nil
	})
	return role, err
}

// Accounts lists the home account and every registered one, by id, with
// their roles by name.
func (c *Cloud) Accounts() ([]Account, error) {
	var out []Account
	err := c.withRegistry(false, func(reg *Registry, home string) error {
		ids := map[string]bool{home: true}
		for id := range reg.Accounts {
			ids[id] = true
		}
		for id := range ids {
			a := Account{ID: id, Home: id == home}
			if e := reg.Accounts[id]; e != nil {
				for _, r := range e.Roles {
					a.Roles = append(a.Roles, *r)
				}
			}
			sort.Slice(a.Roles, func(i, j int) bool { return a.Roles[i].Name < a.Roles[j].Name })
			out = append(out, a)
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// Account is the store of account id: this (home) cloud for "" or the
// home id, else the registered account's, opened once and kept (its
// caches follow it) with this cloud's clock. An id nobody registered is
// an UnknownAccountError.
func (c *Cloud) Account(id string) (*Cloud, error) {
	if id == "" {
		return c, nil
	}
	if err := awssts.CheckAccountID(id); err != nil {
		return nil, err
	}
	known := false
	home := ""
	if err := c.withRegistry(false, func(reg *Registry, h string) error {
		home, known = h, reg.Accounts[id] != nil
		return nil
	}); err != nil {
		return nil, err
	}
	if id == home {
		return c, nil
	}
	if !known {
		return nil, &UnknownAccountError{Account: id}
	}
	return c.accountCloud(id)
}

// accountCloud opens (once) the store of a second account.
func (c *Cloud) accountCloud(id string) (*Cloud, error) {
	s := c.s
	s.accountsMu.Lock()
	defer s.accountsMu.Unlock()
	if as, ok := s.accounts[id]; ok {
		return &Cloud{s: as, now: c.now}, nil
	}
	as, err := openStore(filepath.Join(s.dir, AccountsDir, id))
	if err != nil {
		return nil, err
	}
	as.account = id
	as.home = s
	if s.accounts == nil {
		s.accounts = map[string]*Store{}
	}
	s.accounts[id] = as
	return &Cloud{s: as, now: c.now}, nil
}

// AccountIDs are the ids of every account with a store: the home one
// first, then the registered ones in order.
func (c *Cloud) AccountIDs() ([]string, error) {
	accts, err := c.Accounts()
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, a := range accts {
		if a.Home {
			ids = append([]string{a.ID}, ids...)
		} else {
			ids = append(ids, a.ID)
		}
	}
	return ids, nil
}

// Identity is who signs with accessKeyID: the home user for the static
// keys, the assumed role's session for issued ones. Any other key is
// STS's InvalidClientTokenId, an expired one ExpiredToken.
func (c *Cloud) Identity(accessKeyID string) (Identity, error) {
	var id Identity
	err := c.withRegistry(false, func(reg *Registry, home string) error {
		if slices.Contains(HomeAccessKeyIDs, accessKeyID) {
			id = homeIdentity(home)
			return nil
		}
		sess := reg.Sessions[accessKeyID]
		if sess == nil {
			return &STSError{awssts.STSInvalidClientTokenID, 403, "The security token included in the request is invalid."}
		}
		if !c.now().Before(sess.Expires) {
			return &STSError{"ExpiredToken", 403, "The security token included in the request is expired"}
		}
		id = sessionIdentity(sess)
		return nil
	})
	return id, err
}

func homeIdentity(home string) Identity {
	return Identity{Account: home, ARN: "arn:aws:iam::" + home + ":user/" + HomeUser, UserID: "AIDACELLCTLSIMULATED"}
}

func sessionIdentity(s *Session) Identity {
	return Identity{Account: s.Account, ARN: awssts.AssumedRoleARN("aws", s.Account, s.Role, s.SessionName),
		UserID: roleID(s.RoleARN) + ":" + s.SessionName, Session: s}
}

// roleID is a stable IAM-style unique id of a role ("AROA…").
func roleID(arn string) string {
	h := sha256.Sum256([]byte(arn))
	return "AROA" + strings.ToUpper(hex.EncodeToString(h[:])[:17])
}

// HomeIdentity is the identity of the home credentials (the caller the
// provider assumes roles as).
func (c *Cloud) HomeIdentity() (Identity, error) {
	home, err := c.HomeAccount()
	if err != nil {
		return Identity{}, err
	}
	return homeIdentity(home), nil
}

// AssumeRoleInput is an sts:AssumeRole request.
type AssumeRoleInput struct {
	RoleARN, SessionName, ExternalID string
	// Seconds is DurationSeconds (0: STS's default).
	Seconds int
	// Issue records temporary credentials; without it the call only
	// decides (the provider checks its assumeRole before using the
	// account's store directly).
	Issue bool
}

// AssumeRole decides whether caller may assume the role as STS would and,
// when in.Issue is set, issues temporary credentials. Refusals are
// *STSError: ValidationError for a parameter outside its constraints,
// AccessDenied (with STS's wording, which does not tell a missing role
// from an untrusted caller or a wrong external id) otherwise.
func (c *Cloud) AssumeRole(caller Identity, in AssumeRoleInput) (Session, error) {
	arn, err := awssts.ParseRoleARN(in.RoleARN)
	if err != nil {
		return Session{}, invalid(err.Error())
	}
	if err := awssts.CheckRoleSessionName(in.SessionName); err != nil {
		return Session{}, invalid(err.Error())
	}
	if in.ExternalID != "" {
		if err := awssts.CheckExternalID(in.ExternalID); err != nil {
			return Session{}, invalid(err.Error())
		}
	}
	if in.Seconds == 0 {
		in.Seconds = awssts.DefaultRoleSessionSeconds
	}
	if err := awssts.CheckRoleSessionSeconds(in.Seconds); err != nil {
		return Session{}, invalid(err.Error())
	}
	if caller.Session != nil && in.Seconds > awssts.MaxChainedRoleSessionSeconds {
		return Session{}, invalid("The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.")
	}
	var sess Session
	err = c.withRegistry(in.Issue, func(reg *Registry, _ string) error {
		var role *Role
		if acct := reg.Accounts[arn.Account]; acct != nil {
			role = acct.Roles[arn.Name]
		}
		// The role's path is part of its ARN: a role registered without
		// one is not the role under /team/.
		if role == nil || role.ARN != arn.String() || !slices.Contains(role.Trust, caller.Account) ||
			(role.ExternalID != "" && role.ExternalID != in.ExternalID) {
			return denied(awssts.AssumeRoleDenied(caller.ARN, in.RoleARN))
		}
		sess = Session{Account: arn.Account, Role: arn.Name, RoleARN: role.ARN, SessionName: in.SessionName,
			Expires: c.now().Add(time.Duration(in.Seconds) * time.Second).UTC().Truncate(time.Second)}
		if !in.Issue {
			return nil
		}
		for k, s := range reg.Sessions {
			if !c.now().Before(s.Expires) {
				delete(reg.Sessions, k)
			}
		}
		key, err := randomHex(7)
		if err != nil {
			return err
		}
		secret, err := randomHex(20)
		if err != nil {
			return err
		}
		token, err := randomHex(32)
		if err != nil {
			return err
		}
		sess.AccessKeyID = issuedKeyPrefix + strings.ToUpper(key)[:13]
		sess.SecretAccessKey, sess.SessionToken = secret, "SIMSTS"+token
		reg.Sessions[sess.AccessKeyID] = &sess
		return nil
	})
	return sess, err
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
