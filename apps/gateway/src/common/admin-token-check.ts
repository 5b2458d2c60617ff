/**
 * What the guards need of the admin token: whether a candidate is it. The admin area's AdminTokenService
 * provides it (the core module binds this token to it), so common/ does not import the admin area.
 */
export interface AdminTokenCheck {
  verify(candidate: string | undefined): Promise<boolean>;
}

export const ADMIN_TOKEN_CHECK = Symbol('ADMIN_TOKEN_CHECK');
