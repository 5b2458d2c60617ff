import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** `GET /proxy-managed/cities`: the cities of a country (default `br`), of one state, matching a search. */
export class ProxyManagedCitiesQuery {
  @IsOptional() @IsString() @Matches(/^[a-z]{2}$/, { message: 'country must be a lowercase ISO alpha-2 code such as br' }) country?: string;
  @IsOptional() @IsString() @Matches(/^[a-z0-9-]{1,16}$/, { message: 'state must be a lowercase state code such as sp' }) state?: string;
  @IsOptional() @IsString({ message: 'search must be a string' }) @MaxLength(100, { message: 'search must be at most 100 characters' }) search?: string;
}
